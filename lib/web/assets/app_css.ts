/**
 * The page's style sheet, as a string embedded in the executable: the
 * transcript style plus the layout of the listing, search, usage and the
 * header; usable from 375 px wide.
 *
 * @module
 */
import { TRANSCRIPT_CSS } from "./transcript_css.ts";

/** The page's CSS (`/assets/app.css`). */
export const APP_CSS = TRANSCRIPT_CSS + `
/* Red and green text readable on either scheme (4.5:1 at least): the chart colours are not. */
:root { --danger: #c0392b; --ok: #287a52; }
@media (prefers-color-scheme: dark) { :root { --danger: #ff7b6e; --ok: #6cc49a; } }
/* What is scrolled to (the focus moved with Tab, a row chosen with j, a page down) stays below the
   sticky header, not under it: --top is its height, kept by the script. */
html { scroll-padding-top: calc(var(--top, 6.5em) + 8px); }
.top { position: sticky; top: 0; z-index: 5; display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 8px 16px; background: var(--panel); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
.top nav { display: flex; gap: 12px; }
.top nav a { text-decoration: none; color: var(--muted); padding: 2px 0; border-bottom: 2px solid transparent; }
.top nav a.active { color: var(--fg); border-bottom-color: var(--accent); }
#q { flex: 1 1 220px; min-width: 0; padding: 6px 10px; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip-path: inset(50%); white-space: nowrap; border: 0; }
.back { margin-right: 8px; align-self: center; }
.view:focus { outline: none; }
.live { color: var(--muted); font-size: 12px; }
.live.on { color: var(--ok); }
#app { max-width: 1100px; margin: 0 auto; padding: 12px 16px 48px; }
.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; margin: 4px 0 12px; font-size: 14px; }
.filters select, .filters input[type=date], button, .button { font: inherit; font-size: 14px; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); text-decoration: none; cursor: pointer; }
.filters select { max-width: min(100%, 24em); text-overflow: ellipsis; }
.exports { display: inline-flex; gap: 8px; color: var(--muted); }
button:disabled { opacity: .5; cursor: default; }
button.danger { color: var(--danger); }
.rows { list-style: none; padding: 0; margin: 0; }
.row { border-bottom: 1px solid var(--line); }
.row.selected { background: var(--panel); box-shadow: inset 3px 0 0 var(--accent); }
.row.named { border: 1px solid var(--accent); border-radius: 6px; margin-bottom: 8px; }
.row-link { display: grid; grid-template-columns: minmax(0, 1fr); gap: 2px; padding: 8px 10px; text-decoration: none; color: var(--fg); min-width: 0; }
.row-link:hover { background: var(--panel); }
.row-title { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row-preview { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 14px; }
.row-meta { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.snippet { font-size: 14px; overflow-wrap: anywhere; white-space: pre-wrap; max-height: 8em; overflow: hidden; }
.ctx { font-size: 12px; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ctx-role { font-weight: 600; text-transform: uppercase; }
.badge { display: inline-block; font-size: 11px; border: 1px solid var(--line); border-radius: 10px; padding: 0 6px; margin-left: 6px; color: var(--muted); }
.pager { display: flex; gap: 12px; align-items: center; justify-content: center; margin: 16px 0; }
.muted, .subtle { color: var(--muted); }
h2.subtle { font-size: 14px; font-weight: 500; margin: 0; }
.empty { color: var(--muted); text-align: center; padding: 24px; }
.error, .export-error, .gone { color: var(--danger); padding: 16px; border: 1px solid var(--danger); border-radius: 8px; }
.export-error { margin: 8px 0; overflow-wrap: anywhere; }
/* A transcript's word on itself (the message a link opens at is not in it). */
.note { color: var(--muted); padding: 12px 16px; border: 1px solid var(--line); border-radius: 8px; margin: 0 0 12px; }
/* A session deleted while its transcript is read: said under the header, from anywhere in it. */
.gone { margin: 0 0 12px; position: sticky; top: var(--top, 0); z-index: 4; background: var(--bg); }
/* The rows a newer Hermes took back or hides, shown with all=1: marked as show --all marks them. */
.all-toggle { display: inline-flex; align-items: center; gap: 4px; font-size: 14px; color: var(--muted); }
.msg.taken-back { border-style: dashed; opacity: .8; }
.msg-head .mark, .row-meta .mark { font-weight: 600; color: var(--danger); }
.view-session h1 { font-size: 22px; margin: 8px 0; overflow-wrap: anywhere; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
.session-info { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; align-items: start; }
@media (max-width: 700px) { .session-info { grid-template-columns: minmax(0, 1fr); } }
.lineage h2 { font-size: 14px; margin: 8px 0 4px; color: var(--muted); }
.tree, .tree ul { list-style: none; padding-left: 14px; margin: 0; border-left: 1px solid var(--line); font-size: 14px; }
.tree li { margin: 3px 0; overflow-wrap: anywhere; }
.tree li.current > strong { color: var(--accent); }
.tree li.cut { color: var(--muted); font-style: italic; }
.lineage { max-height: 70vh; overflow: auto; }
.live.failed { color: var(--danger); }
.text.big { max-height: 60vh; overflow: auto; }
.more { margin: 4px 0; }
/* A message out of view is laid out only once scrolled to: a transcript of thousands draws at once. */
.messages > .msg { content-visibility: auto; contain-intrinsic-size: auto 160px; }
.messages > .msg.laid-out { content-visibility: visible; }
.totals { color: var(--muted); }
.usage-pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; align-items: start; margin: 12px 0 24px; }
.usage-pair.charts { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
@media (max-width: 800px) { .usage-pair, .usage-pair.charts { grid-template-columns: minmax(0, 1fr); } }
.usage-detail { margin: -12px 0 24px; }
.chart-box { margin: 0; }
.chart-box figcaption { font-weight: 600; margin-bottom: 4px; }
.chart { width: 100%; height: auto; display: block; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis { fill: var(--muted); font-size: 11px; }
.chart .bar.s0, .legend .s0::before { fill: var(--c1); background: var(--c1); }
.chart .bar.s1, .legend .s1::before { fill: var(--c2); background: var(--c2); }
.chart .bar.s2, .legend .s2::before { fill: var(--c3); background: var(--c3); }
.legend { display: flex; gap: 12px; font-size: 12px; color: var(--muted); }
.legend .key::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
.table-box { overflow-x: auto; }
.usage-table { border-collapse: collapse; width: 100%; font-size: 13px; }
.usage-table th, .usage-table td { text-align: right; padding: 3px 6px; border-bottom: 1px solid var(--line); white-space: nowrap; }
.usage-table th:first-child, .usage-table td:first-child { text-align: left; white-space: normal; overflow-wrap: anywhere; }
`;
