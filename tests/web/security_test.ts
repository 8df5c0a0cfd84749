import { test } from "node:test";
import assert from "node:assert/strict";
import {
  allowedHost,
  cookieValue,
  hostName,
  isLoopbackHost,
  sameSecret,
} from "../../lib/web/security.ts";

test("isLoopbackHost() knows loopback names and addresses, and nothing else", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"]) {
    assert.ok(isLoopbackHost(host), host);
  }
  for (const host of ["0.0.0.0", "::", "192.168.1.2", "localhost.evil.test", "128.0.0.1"]) {
    assert.ok(!isLoopbackHost(host), host);
  }
});

test("hostName() drops the port, keeps IPv6 brackets and lower-cases", () => {
  assert.equal(hostName("Example.ORG:8787"), "example.org");
  assert.equal(hostName("[::1]:8787"), "[::1]");
  assert.equal(hostName("localhost"), "localhost");
});

test("allowedHost() answers loopback, the bound address and --public-url names; a wildcard bind adds IP literals", () => {
  const loopback = { bind: "127.0.0.1", extraNames: [] };
  assert.ok(allowedHost("127.0.0.1:8787", loopback));
  assert.ok(allowedHost("localhost:8787", loopback));
  assert.ok(allowedHost("[::1]:8787", loopback));
  assert.ok(!allowedHost("evil.test:8787", loopback));
  assert.ok(!allowedHost("192.168.1.5:8787", loopback));
  assert.ok(!allowedHost("rebind.localhost:8787", loopback));
  assert.ok(!allowedHost(null, loopback));
  assert.ok(!allowedHost("", loopback));
  const lan = { bind: "192.168.1.5", extraNames: ["box.lan"] };
  assert.ok(allowedHost("192.168.1.5:8787", lan));
  assert.ok(allowedHost("box.lan", lan));
  assert.ok(!allowedHost("10.0.0.1:8787", lan));
  const every = { bind: "0.0.0.0", extraNames: [] };
  assert.ok(allowedHost("10.0.0.1:8787", every));
  assert.ok(allowedHost("[fe80::1]:8787", every));
  assert.ok(!allowedHost("evil.test", every));
});

test("cookieValue() and sameSecret() read one cookie and compare secrets exactly", () => {
  assert.equal(cookieValue("a=1; hermes_state_token=abc; b=2", "hermes_state_token"), "abc");
  assert.equal(cookieValue("xhermes_state_token=abc", "hermes_state_token"), undefined);
  assert.equal(cookieValue(null, "x"), undefined);
  assert.ok(sameSecret("abc", "abc"));
  assert.ok(!sameSecret("abc", "abd"));
  assert.ok(!sameSecret("abc", "abcd"));
  assert.ok(!sameSecret("", "a"));
});
