/**
 * The style of a transcript, shared by the web page and the standalone HTML
 * export: colours from `prefers-color-scheme`, system fonts (CJK and emoji
 * included), long words wrapped, bidirectional text isolated.
 *
 * @module
 */

/** The transcript CSS. */
export const TRANSCRIPT_CSS = `:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1d1f23; --muted: #626a75; --line: #dde1e6; --panel: #f5f7f9;
  --accent: #2958c7; --mark: #ffe58a; --user: #eef3ff; --assistant: #ffffff; --tool: #f3f6ef;
  --system: #fbf3e6; --code: #f0f2f5; --c1: #3b6fd9; --c2: #e0823a; --c3: #4aa37a; --c4: #a45fc9;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171a; --fg: #e3e6ea; --muted: #98a1ad; --line: #2d3238; --panel: #1d2024;
    --accent: #7ea6ff; --mark: #6b5a12; --user: #1b2436; --assistant: #17191c; --tool: #1b231b;
    --system: #2a2419; --code: #23272c; --c1: #6f97ee; --c2: #f0a062; --c3: #6cc49a; --c4: #c58ae6;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", "WenQuanYi Micro Hei",
    "Noto Sans CJK SC", sans-serif, "Apple Color Emoji", "Noto Color Emoji";
}
a { color: var(--accent); }
code, pre, .mono { font-family: ui-monospace, "SF Mono", Menlo, Consolas, "WenQuanYi Micro Hei Mono", monospace; font-size: 13px; }
pre { background: var(--code); padding: 8px 10px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
code { background: var(--code); padding: 0 3px; border-radius: 3px; }
pre code { background: none; padding: 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; unicode-bidi: plaintext; text-align: start; }
.text p { margin: 0 0 8px; }
.bidi { unicode-bidi: plaintext; overflow-wrap: anywhere; }
.msg { border: 1px solid var(--line); border-radius: 8px; margin: 10px 0; padding: 8px 12px; background: var(--assistant); min-width: 0; overflow-wrap: anywhere; }
.msg.role-user { background: var(--user); }
.msg.role-tool { background: var(--tool); }
.msg.role-system { background: var(--system); }
.msg.target { outline: 3px solid var(--accent); }
.msg-head { display: flex; flex-wrap: wrap; gap: 4px 10px; font-size: 12px; color: var(--muted); margin-bottom: 4px; }
.msg-head .role { font-weight: 600; color: var(--fg); text-transform: uppercase; letter-spacing: .04em; }
details { margin: 6px 0; }
details > summary { cursor: pointer; color: var(--muted); font-size: 13px; }
.call { border-left: 3px solid var(--c2); padding-left: 8px; }
.call-grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 8px; }
@media (max-width: 700px) { .call-grid { grid-template-columns: minmax(0, 1fr); } }
.part-label { display: inline-block; font-size: 12px; color: var(--muted); border: 1px dashed var(--line); border-radius: 4px; padding: 0 6px; margin: 2px 0; }
.part-image { max-width: 100%; max-height: 480px; border-radius: 6px; display: block; margin: 6px 0; }
.figures { font-size: 12px; color: var(--muted); }
.details-list { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; font-size: 14px; margin: 8px 0 16px; }
.details-list dt { color: var(--muted); }
.details-list dd { margin: 0; overflow-wrap: anywhere; }
mark { background: var(--mark); color: inherit; border-radius: 2px; }
.no-text { color: var(--muted); font-size: 14px; }
`;
