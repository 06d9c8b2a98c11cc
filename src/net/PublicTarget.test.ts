/**
 * The public-target check, table-driven: every URL form below is judged with a deterministic
 * resolver (names map to fixed answers), and the verdict is the exact refusal reason or an
 * accepted address. The table covers the IPv4 special blocks, legacy IPv4 literal forms, IPv6
 * special blocks, IPv4 embedded in IPv6 (mapped, compatible, NAT64, 6to4, Teredo), local names,
 * schemes and credentials, and names that resolve to a mix of public and non-public addresses.
 */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { classifyAddress, classifyName, hostAsAddress, parseIpv4Loose, parseIpv6 } from "./PublicAddress.js"
import { checkTarget, type Resolver, type TargetPolicy } from "./PublicTarget.js"

const dnsAnswers: Record<string, ReadonlyArray<string>> = {
  "hooks.example.com": ["93.184.216.34"],
  "dual.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "rebind.example.com": ["93.184.216.34", "10.0.0.5"],
  "metadata.example.com": ["169.254.169.254"],
  "v6private.example.com": ["fd00::1"],
  "mapped.example.com": ["::ffff:169.254.169.254"],
  "loop.example.com": ["127.0.0.1"],
  localhost: ["127.0.0.1", "::1"]
}

const resolver: Resolver = (host) => {
  if (host === "slow.example.com") return new Promise(() => {})
  const answers = dnsAnswers[host.toLowerCase().replace(/\.$/, "")]
  if (answers === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" }))
  return Promise.resolve(answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))
}

const policy = (allowLoopback = false): TargetPolicy => ({ allowLoopback, resolve: resolver, resolveTimeoutMs: 200 })

const judge = (url: string, allowLoopback = false): Promise<string> =>
  Effect.runPromise(Effect.either(checkTarget(url, policy(allowLoopback)))).then((r) =>
    Either.isLeft(r) ? r.left.reason : `ok ${r.right.address}`
  )

/** [url, expected verdict]: a refusal reason, or `ok <address connected to>`. */
const table: ReadonlyArray<readonly [string, string]> = [
  // IPv4 loopback, in every literal form the URL parser (and inet_aton) accepts
  ["https://127.0.0.1/hook", "loopback"],
  ["https://127.255.255.254/", "loopback"],
  ["https://127.1/", "loopback"],
  ["https://2130706433/", "loopback"],
  ["https://0x7f000001/", "loopback"],
  ["https://0177.0.0.1/", "loopback"],
  ["https://0x7f.0.0.1/", "loopback"],
  ["https://0x7f.1/", "loopback"],
  ["https://017700000001/", "loopback"],
  ["https://127.0.0.1./", "loopback"],
  // localhost names
  ["https://localhost/", "localhost"],
  ["https://LOCALHOST./", "localhost"],
  ["https://api.localhost:8443/", "localhost"],
  ["https://loop.example.com/", "loopback"],
  // IPv4 special blocks
  ["https://0.0.0.0/", "unspecified"],
  ["https://0/", "unspecified"],
  ["https://10.0.0.1/", "private"],
  ["https://10.255.255.255/", "private"],
  ["https://172.16.5.4/", "private"],
  ["https://172.31.255.255/", "private"],
  ["https://192.168.1.1/", "private"],
  ["https://0xc0a80101/", "private"],
  ["https://169.254.169.254/latest/meta-data", "link_local"],
  ["https://100.64.0.1/", "cgnat"],
  ["https://100.127.255.254/", "cgnat"],
  ["https://192.0.0.8/", "reserved"],
  ["https://192.0.2.1/", "documentation"],
  ["https://198.51.100.7/", "documentation"],
  ["https://203.0.113.9/", "documentation"],
  ["https://198.18.0.1/", "benchmarking"],
  ["https://198.19.255.1/", "benchmarking"],
  ["https://192.88.99.1/", "reserved"],
  ["https://224.0.0.1/", "multicast"],
  ["https://239.255.255.250/", "multicast"],
  ["https://240.0.0.1/", "reserved"],
  ["https://255.255.255.255/", "broadcast"],
  // IPv6 special blocks
  ["https://[::1]/", "loopback"],
  ["https://[0:0:0:0:0:0:0:1]/", "loopback"],
  ["https://[::]/", "unspecified"],
  ["https://[fe80::1]/", "link_local"],
  ["https://[febf:ffff::1]/", "link_local"],
  ["https://[fc00::1]/", "unique_local"],
  ["https://[fd12:3456:789a::1]/", "unique_local"],
  ["https://[fec0::1]/", "site_local"],
  ["https://[ff02::1]/", "multicast"],
  ["https://[ff0e::101]/", "multicast"],
  ["https://[2001:db8::1]/", "documentation"],
  ["https://[3fff::1]/", "documentation"],
  ["https://[100::1]/", "discard"],
  ["https://[2001:2::1]/", "benchmarking"],
  ["https://[2001:10::1]/", "orchid"],
  ["https://[2001:100::1]/", "reserved"],
  ["https://[5f00::1]/", "reserved"],
  ["https://[4000::1]/", "reserved"],
  ["https://[e000::1]/", "reserved"],
  // IPv4 inside IPv6
  ["https://[::ffff:127.0.0.1]/", "ipv4_mapped"],
  ["https://[::ffff:7f00:1]/", "ipv4_mapped"],
  ["https://[0:0:0:0:0:ffff:a00:1]/", "ipv4_mapped"],
  ["https://[::ffff:8.8.8.8]/", "ipv4_mapped"],
  ["https://[::ffff:0:8.8.8.8]/", "ipv4_mapped"],
  ["https://[::127.0.0.1]/", "ipv4_compatible"],
  ["https://[::8.8.8.8]/", "ipv4_compatible"],
  ["https://[64:ff9b::10.0.0.1]/", "nat64"],
  ["https://[64:ff9b::8.8.8.8]/", "nat64"],
  ["https://[64:ff9b:1::a00:1]/", "nat64"],
  ["https://[2002:7f00:1::1]/", "6to4_embedded"],
  ["https://[2002:c0a8:101::1]/", "6to4_embedded"],
  ["https://[2002:a9fe:a9fe::1]/", "6to4_embedded"],
  ["https://[2002:808:808::1]/", "ok 2002:808:808::1"],
  // Teredo: server 65.54.227.120; client (inverted) 10.0.0.1, then 8.8.8.8; server 10.0.0.1
  ["https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "teredo_embedded"],
  ["https://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/", "teredo_embedded"],
  ["https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", "ok 2001:0:4136:e378:8000:63bf:f7f7:f7f7"],
  // names: local suffixes, single labels, resolution
  ["https://intranet/", "single_label"],
  ["https://printer.local/", "local_name"],
  ["https://db.internal/", "local_name"],
  ["https://nas.home.arpa/", "local_name"],
  ["https://metadata.example.com/", "link_local"],
  ["https://rebind.example.com/", "private"],
  ["https://v6private.example.com/", "unique_local"],
  ["https://mapped.example.com/", "ipv4_mapped"],
  ["https://nxdomain.example.com/", "unresolvable"],
  ["https://slow.example.com/", "unresolvable"],
  // scheme, credentials, syntax
  ["http://hooks.example.com/", "not_https"],
  ["ftp://hooks.example.com/", "not_https"],
  ["ws://hooks.example.com/", "not_https"],
  ["https://user:pass@hooks.example.com/", "credentials_in_url"],
  ["https://user@hooks.example.com/", "credentials_in_url"],
  ["not a url", "invalid_url"],
  ["/relative/path", "invalid_url"],
  [`https://hooks.example.com/${"a".repeat(2100)}`, "invalid_url"],
  // accepted: public addresses and names resolving only to public addresses
  ["https://8.8.8.8/", "ok 8.8.8.8"],
  ["https://1.1.1.1:8443/x?y=1", "ok 1.1.1.1"],
  ["https://[2606:4700:4700::1111]/", "ok 2606:4700:4700::1111"],
  ["https://hooks.example.com/webhooks", "ok 93.184.216.34"],
  ["https://HOOKS.example.com./webhooks", "ok 93.184.216.34"],
  ["https://dual.example.com/", "ok 93.184.216.34"],
  ["https://100.128.0.1/", "ok 100.128.0.1"],
  ["https://172.32.0.1/", "ok 172.32.0.1"],
  ["https://192.169.0.1/", "ok 192.169.0.1"]
]

describe("public-target check (production policy)", () => {
  it(`judges ${table.length} address forms`, async () => {
    expect(table.length).toBeGreaterThanOrEqual(30)
    const got = await Promise.all(table.map(([url]) => judge(url)))
    const mismatches = table.flatMap(([url, want], i) => (got[i] === want ? [] : [{ url, want, got: got[i] }]))
    expect(mismatches).toEqual([])
  })

  it("keeps the host for TLS SNI and pins the checked address", async () => {
    const target = await Effect.runPromise(checkTarget("https://hooks.example.com:8443/a?b=c", policy()))
    expect(target).toMatchObject({ hostname: "hooks.example.com", port: 8443, address: "93.184.216.34", family: 4, servername: "hooks.example.com" })
    const literal = await Effect.runPromise(checkTarget("https://[2606:4700:4700::1111]/", policy()))
    expect(literal).toMatchObject({ hostname: "2606:4700:4700::1111", port: 443, family: 6, servername: undefined })
  })
})

describe("public-target check under the loopback test flag", () => {
  const flagged: ReadonlyArray<readonly [string, string]> = [
    ["http://127.0.0.1:8080/hook", "ok 127.0.0.1"],
    ["https://127.0.0.1/", "ok 127.0.0.1"],
    ["http://[::1]:9000/", "ok ::1"],
    ["http://localhost:9000/", "ok 127.0.0.1"],
    ["http://loop.example.com/", "ok 127.0.0.1"],
    // the flag lifts loopback only
    ["http://10.0.0.1/", "private"],
    ["https://169.254.169.254/", "link_local"],
    ["https://[::ffff:127.0.0.1]/", "ipv4_mapped"],
    ["https://printer.local/", "local_name"],
    // http only to loopback
    ["http://hooks.example.com/", "not_https"],
    ["http://8.8.8.8/", "not_https"],
    ["https://hooks.example.com/", "ok 93.184.216.34"]
  ]
  it.each(flagged)("%s -> %s", async (url, want) => {
    expect(await judge(url, true)).toBe(want)
  })
})

describe("address parsing", () => {
  it("reads the legacy IPv4 literal forms as inet_aton does", () => {
    const q = (s: string) => {
      const b = parseIpv4Loose(s)
      return b === undefined ? undefined : Array.from(b).join(".")
    }
    expect(q("127.1")).toBe("127.0.0.1")
    expect(q("2130706433")).toBe("127.0.0.1")
    expect(q("0x7f.1")).toBe("127.0.0.1")
    expect(q("0177.0.0.01")).toBe("127.0.0.1")
    expect(q("017700000001")).toBe("127.0.0.1")
    expect(q("10.0x10.1")).toBe("10.16.0.1")
    expect(q("192.168.257")).toBe("192.168.1.1")
    expect(q("0")).toBe("0.0.0.0")
    expect(q("4294967295")).toBe("255.255.255.255")
    expect(q("4294967296")).toBeUndefined()
    expect(q("256.0.0.1")).toBeUndefined()
    expect(q("08.0.0.1")).toBeUndefined() // not octal, not decimal
    expect(q("1.2.3.4.5")).toBeUndefined()
    expect(q("example.com")).toBeUndefined()
    expect(q("1.2.3.example")).toBeUndefined()
  })

  it("treats a raw host that is a legacy literal as an address, never a name", () => {
    expect(hostAsAddress("0x7f.1")).toEqual({ address: "127.0.0.1", family: 4 })
    expect(hostAsAddress("[::1]")).toEqual({ address: "::1", family: 6 })
    expect(hostAsAddress("hooks.example.com")).toBeUndefined()
  })

  it("parses IPv6 with compression and dotted tails", () => {
    expect(Array.from(parseIpv6("::ffff:1.2.3.4")!)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4])
    expect(Array.from(parseIpv6("2001:db8::1")!)).toEqual([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    expect(parseIpv6("fe80::1%eth0")).toBeUndefined()
    expect(parseIpv6("1::2::3")).toBeUndefined()
    expect(parseIpv6("12345::")).toBeUndefined()
  })

  it("classifies addresses and refuses non-addresses", () => {
    expect(classifyAddress("8.8.8.8")).toEqual({ public: true, family: 4 })
    expect(classifyAddress("[fe80::1]")).toEqual({ public: false, family: 6, reason: "link_local" })
    expect(classifyAddress("example.com")).toBeUndefined()
    expect(classifyName("a.b.example.com")).toEqual({ ok: true })
    expect(classifyName("bad name.com")).toEqual({ ok: false, reason: "invalid_name" })
  })
})
