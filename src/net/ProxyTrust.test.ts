import { describe, expect, it } from "vitest"
import { clientBehind, formatIp, MAX_FORWARDED_HOPS, parseIp, parseProxyTrust, type ProxyTrust } from "./ProxyTrust.js"

const trustOf = (text: string): ProxyTrust => {
  const parsed = parseProxyTrust(text)
  if ("error" in parsed) throw new Error(parsed.error)
  return parsed.trust
}
const ip = (text: string) => parseIp(text)!

describe("parseIp and formatIp", () => {
  it("reads IPv4, IPv6 (compressed, full, bracketed, with an IPv4 tail) and unmaps IPv4-mapped IPv6", () => {
    expect(formatIp(ip("203.0.113.7"))).toBe("203.0.113.7")
    expect(formatIp(ip("::1"))).toBe("0000:0000:0000:0000:0000:0000:0000:0001")
    expect(formatIp(ip("[2001:db8::1]"))).toBe("2001:0db8:0000:0000:0000:0000:0000:0001")
    expect(formatIp(ip("0000:0000:0000:0000:0000:ffff:7f00:0001"))).toBe("127.0.0.1")
    expect(formatIp(ip("::ffff:10.1.2.3"))).toBe("10.1.2.3")
    expect(formatIp(ip("64:ff9b::192.0.2.33"))).toBe("0064:ff9b:0000:0000:0000:0000:c000:0221")
  })

  it("refuses what is not an address", () => {
    for (const bad of ["", "unknown", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-1", "::1::2", "1:2:3:4:5:6:7:8:9", "12345::", "g::1", "1.2.3.4/8", " 1.2.3.4"]) {
      expect(parseIp(bad), bad).toBeUndefined()
    }
  })
})

describe("parseProxyTrust (TRUSTED_PROXIES)", () => {
  it("takes addresses and CIDR blocks, IPv4 and IPv6, comma-separated; empty trusts nothing", () => {
    expect(trustOf("").rules).toEqual([])
    expect(trustOf(" 10.0.0.0/8 , ::1,fd00::/8,192.0.2.1 ").rules.map((r) => r.prefixBits)).toEqual([8, 128, 8, 32])
  })

  it("names the first bad entry", () => {
    expect(parseProxyTrust("10.0.0.0/8,proxy.internal")).toEqual({ error: "'proxy.internal' is not an IPv4 or IPv6 address or CIDR block" })
    expect(parseProxyTrust("10.0.0.0/33")).toEqual({ error: "'10.0.0.0/33' has a prefix length out of range" })
    expect(parseProxyTrust("::/x")).toEqual({ error: "'::/x' has a malformed prefix length" })
  })
})

describe("clientBehind: the first untrusted address in X-Forwarded-For, from the right", () => {
  const trust = trustOf("127.0.0.1,10.0.0.0/8,fd00::/8")

  it("a peer that is not trusted is its own client: a spoofed header changes nothing", () => {
    expect(clientBehind(trust, ip("198.51.100.9"), "1.2.3.4")).toBeUndefined()
    expect(clientBehind(trustOf(""), ip("127.0.0.1"), "1.2.3.4")).toBeUndefined()
  })

  it("walks from the right past trusted hops to the first untrusted address", () => {
    expect(clientBehind(trust, ip("127.0.0.1"), "203.0.113.7")).toBe("203.0.113.7")
    // The leftmost entry is whatever the client claimed; the proxy appended the real one.
    expect(clientBehind(trust, ip("127.0.0.1"), "6.6.6.6, 203.0.113.7")).toBe("203.0.113.7")
    expect(clientBehind(trust, ip("127.0.0.1"), "203.0.113.7, 10.1.1.1 ,fd00::5")).toBe("203.0.113.7")
    expect(clientBehind(trust, ip("::ffff:127.0.0.1"), "2001:db8::7")).toBe("2001:0db8:0000:0000:0000:0000:0000:0007")
    expect(clientBehind(trust, ip("127.0.0.1"), "203.0.113.7:5150")).toBe("203.0.113.7")
    expect(clientBehind(trust, ip("127.0.0.1"), "[2001:db8::7]:443")).toBe("2001:0db8:0000:0000:0000:0000:0000:0007")
  })

  it("a trusted peer with no header is the client; every hop trusted: the leftmost", () => {
    expect(clientBehind(trust, ip("127.0.0.1"), "")).toBe("127.0.0.1")
    expect(clientBehind(trust, ip("127.0.0.1"), "10.0.0.1, 10.0.0.2")).toBe("10.0.0.1")
  })

  it("a malformed entry stops the walk at the trusted hop that forwarded it", () => {
    expect(clientBehind(trust, ip("127.0.0.1"), "unknown")).toBe("127.0.0.1")
    expect(clientBehind(trust, ip("127.0.0.1"), "203.0.113.7, garbage, 10.0.0.3")).toBe("10.0.0.3")
    expect(clientBehind(trust, ip("127.0.0.1"), "203.0.113.7, , ")).toBe("203.0.113.7")
    expect(clientBehind(trust, ip("127.0.0.1"), ",,,")).toBe("127.0.0.1")
  })

  it(`reads at most ${MAX_FORWARDED_HOPS} entries from the right`, () => {
    const trusted = Array.from({ length: MAX_FORWARDED_HOPS }, (_, i) => `10.0.0.${i + 1}`)
    expect(clientBehind(trust, ip("127.0.0.1"), ["203.0.113.7", ...trusted].join(","))).toBe("10.0.0.1")
    expect(clientBehind(trust, ip("127.0.0.1"), ["203.0.113.7", ...trusted.slice(1)].join(","))).toBe("203.0.113.7")
  })
})
