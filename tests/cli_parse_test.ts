import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  choiceOption,
  choicesOption,
  integerOption,
  parseCommand,
  type ParseSpec,
} from "../lib/cli/parse.ts";
import { UsageError } from "../lib/cli/usage_error.ts";

const SPEC: ParseSpec = {
  command: "demo",
  options: {
    limit: { type: "string" },
    source: { type: "string", multiple: true },
    yes: { type: "boolean", short: "y" },
  },
  maxPositionals: 2,
  positionalNames: "QUERY",
};

function usageError(fn: () => unknown, message: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError);
    assert.equal(error.message, message);
    assert.equal(error.hint, "Try: hermes-state demo --help");
    return true;
  });
}

describe("parseCommand()", () => {
  test("parseCommand() reads --name value, --name=value, short flags and positionals", () => {
    const args = parseCommand(SPEC, ["a", "--limit", "5", "-y", "--source=cli", "b"]);
    assert.equal(args.string("limit"), "5");
    assert.equal(args.flag("yes"), true);
    assert.deepEqual(args.strings("source"), ["cli"]);
    assert.deepEqual(args.positionals, ["a", "b"]);
    assert.equal(args.has("limit"), true);
    assert.equal(args.has("missing"), false);
  });

  test("parseCommand() collects a repeatable option and keeps the last of a single one", () => {
    const args = parseCommand(SPEC, [
      "--source",
      "cli",
      "--source",
      "tui",
      "--limit",
      "1",
      "--limit",
      "2",
    ]);
    assert.deepEqual(args.strings("source"), ["cli", "tui"]);
    assert.equal(args.string("limit"), "2");
  });

  test("parseCommand() takes everything after -- and a lone - as positionals", () => {
    const args = parseCommand(SPEC, ["-", "--", "--yes"]);
    assert.deepEqual(args.positionals, ["-", "--yes"]);
    assert.equal(args.flag("yes"), false);
  });

  test("parseCommand() treats -5 as a value or positional, not an option", () => {
    assert.equal(parseCommand(SPEC, ["--limit", "-5"]).string("limit"), "-5");
    assert.deepEqual(parseCommand(SPEC, ["-5"]).positionals, ["-5"]);
  });

  test("parseCommand() rejects unknown options, values on flags and missing values", () => {
    usageError(() => parseCommand(SPEC, ["--nope"]), "unknown option --nope");
    usageError(() => parseCommand(SPEC, ["-x"]), "unknown option -x");
    usageError(() => parseCommand(SPEC, ["--yes=1"]), "option --yes takes no value");
    usageError(() => parseCommand(SPEC, ["--limit"]), "option --limit needs a value");
    usageError(() => parseCommand(SPEC, ["--limit", "--yes"]), "option --limit needs a value");
    usageError(() => parseCommand(SPEC, ["--constructor"]), "unknown option --constructor");
  });

  test("parseCommand() reads a flag with an inline value as --name or --name=value only", () => {
    const spec: ParseSpec = {
      ...SPEC,
      options: { ...SPEC.options, follow: { type: "boolean", inlineValue: true } },
    };
    const bare = parseCommand(spec, ["--follow", "10"]);
    assert.equal(bare.has("follow"), true);
    assert.equal(bare.string("follow"), undefined);
    assert.deepEqual(bare.positionals, ["10"]);
    const valued = parseCommand(spec, ["--follow=10", "a"]);
    assert.equal(valued.has("follow"), true);
    assert.equal(valued.string("follow"), "10");
    assert.deepEqual(valued.positionals, ["a"]);
    assert.equal(parseCommand(spec, []).has("follow"), false);
    usageError(() => parseCommand(spec, ["--follow="]), 'option --follow= needs a value after "="');
  });

  test("parseCommand() enforces the positional counts", () => {
    usageError(() => parseCommand({ ...SPEC, minPositionals: 1 }, []), "missing QUERY");
    usageError(() => parseCommand(SPEC, ["a", "b", "c"]), 'unexpected argument "c"');
    // Of two named arguments, the message names those not given.
    const pair = { ...SPEC, minPositionals: 2, maxPositionals: 2, positionalNames: "SRC and DEST" };
    usageError(() => parseCommand(pair, []), "missing SRC and DEST");
    usageError(() => parseCommand(pair, ["state.db"]), "missing DEST");
  });
});

describe("integerOption() and choiceOption()", () => {
  test("integerOption() returns the fallback when absent and the number when valid", () => {
    assert.equal(integerOption(parseCommand(SPEC, []), "limit", { fallback: 20 }), 20);
    assert.equal(integerOption(parseCommand(SPEC, ["--limit", "0"]), "limit", { fallback: 20 }), 0);
  });

  test("parseCommand() refuses an empty or blank option value", () => {
    for (
      const [arg, shown] of [[["--limit="], '""'], [["--limit", ""], '""'], [
        ["--limit", "  "],
        '"  "',
      ]] as const
    ) {
      assert.throws(
        () => parseCommand(SPEC, [...arg]),
        (e: unknown) =>
          e instanceof UsageError && e.message === `option --limit needs a value, got ${shown}`,
      );
    }
  });

  test("choicesOption() accepts repeated words of the set and names a bad one", () => {
    const spec = { options: { role: { type: "string" as const, multiple: true } } };
    const args = parseCommand(spec, ["--role", "user", "--role", "tool"]);
    assert.deepEqual(choicesOption(args, "role", { choices: ["user", "tool"] }), ["user", "tool"]);
    assert.throws(
      () => choicesOption(parseCommand(spec, ["--role", "bogus"]), "role", { choices: ["user"] }),
      /--role must be one of user, got "bogus"/,
    );
  });

  test("integerOption() rejects fractions, words and values below the minimum", () => {
    for (const value of ["1.5", "ten", "-1", "1e3"]) {
      assert.throws(
        () =>
          integerOption(parseCommand(SPEC, ["--limit", value]), "limit", {
            fallback: 1,
            command: "demo",
          }),
        new UsageError(`--limit must be a whole number of at least 0, got "${value}"`, {
          command: "demo",
        }),
      );
    }
  });

  test("integerOption() names the largest number it takes when a whole number is beyond it", () => {
    // "must be a whole number of at least 1" was said of 99999999999999999999, which is one.
    for (const value of ["9007199254740992", "99999999999999999999"]) {
      assert.throws(
        () =>
          integerOption(parseCommand(SPEC, ["--limit", value]), "limit", {
            fallback: 1,
            min: 1,
            command: "list",
          }),
        new UsageError(
          `--limit must be a whole number from 1 to 9007199254740991, got "${value}"`,
          { command: "list" },
        ),
      );
    }
  });

  test("choiceOption() accepts only the listed words", () => {
    const args = parseCommand(SPEC, ["--limit", "md"]);
    assert.equal(
      choiceOption(args, "limit", { choices: ["jsonl", "md"], fallback: "jsonl" }),
      "md",
    );
    assert.throws(
      () => choiceOption(args, "limit", { choices: ["a", "b"], fallback: "a" }),
      /--limit must be one of a, b, got "md"/,
    );
  });
});
