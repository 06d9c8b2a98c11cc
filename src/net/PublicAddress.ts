/**
 * Which IP addresses a server-side fetch (webhook deliveries, image fetches) may connect to: only
 * globally reachable unicast. Owns the address tables; pure functions, no I/O.
 *
 * Invariants:
 * - Deny by default. IPv6 must sit in global unicast `2000::/3` and outside every special range
 *   below; IPv4 must miss every IANA special-purpose block that is not globally reachable.
 * - Addresses that carry an IPv4 address inside IPv6 are judged by what they reach: IPv4-mapped,
 *   IPv4-compatible, IPv4-translated and NAT64 forms are refused outright (the connection would
 *   leave through a translator or reach the v4 host itself); 6to4 and Teredo are refused when the
 *   IPv4 address they embed is not public.
 * - A host written as a legacy IPv4 literal (`2130706433`, `0x7f.1`, `0177.0.0.1`, the forms
 *   `inet_aton` accepts) is an address, never a name to resolve.
 */
import { isIPv4, isIPv6 } from "node:net"

export type AddressFamily = 4 | 6

/** Why an address is not public. `loopback` is the only reason a test flag may lift. */
export type NonPublicReason =
  | "unspecified"
  | "loopback"
  | "private"
  | "cgnat"
  | "link_local"
  | "documentation"
  | "benchmarking"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "ipv4_mapped"
  | "ipv4_compatible"
  | "nat64"
  | "6to4_embedded"
  | "teredo_embedded"
  | "unique_local"
  | "site_local"
  | "discard"
  | "orchid"

export type AddressVerdict =
  | { readonly public: true; readonly family: AddressFamily }
  | { readonly public: false; readonly family: AddressFamily; readonly reason: NonPublicReason }

interface Range {
  readonly bytes: ReadonlyArray<number>
  readonly prefixBits: number
  readonly reason: NonPublicReason
}

const v4 = (cidr: string, reason: NonPublicReason): Range => {
  const [addr, bits] = cidr.split("/") as [string, string]
  return { bytes: addr.split(".").map(Number), prefixBits: Number(bits), reason }
}
const v6 = (cidr: string, reason: NonPublicReason): Range => {
  const [addr, bits] = cidr.split("/") as [string, string]
  return { bytes: [...parseIpv6(addr)!], prefixBits: Number(bits), reason }
}

/** IANA IPv4 special-purpose registry, the blocks not globally reachable (first match wins). */
const IPV4_SPECIAL: ReadonlyArray<Range> = [
  v4("0.0.0.0/8", "unspecified"),
  v4("10.0.0.0/8", "private"),
  v4("100.64.0.0/10", "cgnat"),
  v4("127.0.0.0/8", "loopback"),
  v4("169.254.0.0/16", "link_local"),
  v4("172.16.0.0/12", "private"),
  v4("192.0.0.0/24", "reserved"),
  v4("192.0.2.0/24", "documentation"),
  v4("192.88.99.0/24", "reserved"),
  v4("192.168.0.0/16", "private"),
  v4("198.18.0.0/15", "benchmarking"),
  v4("198.51.100.0/24", "documentation"),
  v4("203.0.113.0/24", "documentation"),
  v4("224.0.0.0/4", "multicast"),
  v4("255.255.255.255/32", "broadcast"),
  v4("240.0.0.0/4", "reserved")
]

/** IPv6 blocks refused before the embedded-IPv4 rules and the `2000::/3` test (first match wins). */
const IPV6_SPECIAL: ReadonlyArray<Range> = [
  v6("::/128", "unspecified"),
  v6("::1/128", "loopback"),
  v6("::ffff:0:0/96", "ipv4_mapped"),
  v6("::ffff:0:0:0/96", "ipv4_mapped"),
  v6("::/96", "ipv4_compatible"),
  v6("64:ff9b::/96", "nat64"),
  v6("64:ff9b:1::/48", "nat64"),
  v6("100::/64", "discard"),
  v6("2001:db8::/32", "documentation"),
  v6("3fff::/20", "documentation"),
  v6("2001:2::/48", "benchmarking"),
  v6("2001:10::/28", "orchid"),
  v6("2001:20::/28", "orchid"),
  v6("5f00::/16", "reserved"),
  v6("fc00::/7", "unique_local"),
  v6("fe80::/10", "link_local"),
  v6("fec0::/10", "site_local"),
  v6("ff00::/8", "multicast")
]

const TEREDO = v6("2001::/32", "teredo_embedded")
const SIX_TO_FOUR = v6("2002::/16", "6to4_embedded")
/** The rest of the IETF protocol assignments block (after Teredo and the named ones above). */
const IETF_V6 = v6("2001::/23", "reserved")
const GLOBAL_UNICAST = v6("2000::/3", "reserved")

const inRange = (bytes: ArrayLike<number>, range: Range): boolean => {
  let bits = range.prefixBits
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false
  }
  return true
}

/** Strict dotted-quad IPv4 to 4 bytes. */
export const parseIpv4 = (text: string): Uint8Array | undefined =>
  isIPv4(text) ? Uint8Array.from(text.split(".").map(Number)) : undefined

const parsePart = (part: string): number | undefined => {
  if (part === "") return undefined
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16)
  if (/^0[0-7]*$/.test(part)) return parseInt(part, 8)
  if (/^[1-9][0-9]*$/.test(part)) return parseInt(part, 10)
  return undefined
}

/**
 * The IPv4 literal forms `inet_aton` and the WHATWG URL host parser accept: one to four parts,
 * each decimal, octal (leading `0`) or hex (`0x`), the last part filling the remaining bytes
 * (`127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1`). A trailing dot is allowed, as in URLs.
 */
export const parseIpv4Loose = (text: string): Uint8Array | undefined => {
  const trimmed = text.endsWith(".") ? text.slice(0, -1) : text
  const parts = trimmed.split(".")
  if (parts.length < 1 || parts.length > 4) return undefined
  const values: number[] = []
  for (const p of parts) {
    const v = parsePart(p)
    if (v === undefined || !Number.isSafeInteger(v)) return undefined
    values.push(v)
  }
  const last = values.pop()!
  if (values.some((v) => v > 255)) return undefined
  const lastBytes = 4 - values.length
  if (last >= 2 ** (8 * lastBytes)) return undefined
  const out = new Uint8Array(4)
  values.forEach((v, i) => (out[i] = v))
  for (let i = 0; i < lastBytes; i++) out[3 - i] = Math.floor(last / 2 ** (8 * i)) & 0xff
  return out
}

/** IPv6 text (with `::`, an optional dotted IPv4 tail, no zone) to 16 bytes. */
export function parseIpv6(text: string): Uint8Array | undefined {
  if (!isIPv6(text) || text.includes("%")) return undefined
  let head = text
  let tail: Uint8Array | undefined
  const lastColon = text.lastIndexOf(":")
  if (text.slice(lastColon + 1).includes(".")) {
    tail = parseIpv4(text.slice(lastColon + 1))
    if (tail === undefined) return undefined
    head = text.slice(0, lastColon + 1) + "0:0"
  }
  const halves = head.split("::")
  const groups = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)))
  const left = groups(halves[0]!)
  const right = halves.length === 2 ? groups(halves[1]!) : []
  const fill = 8 - left.length - right.length
  const all = halves.length === 2 ? [...left, ...new Array<number>(fill).fill(0), ...right] : left
  if (all.length !== 8) return undefined
  const out = new Uint8Array(16)
  all.forEach((g, i) => {
    out[2 * i] = g >> 8
    out[2 * i + 1] = g & 0xff
  })
  if (tail !== undefined) out.set(tail, 12)
  return out
}

const classifyV4Bytes = (bytes: ArrayLike<number>): AddressVerdict => {
  for (const range of IPV4_SPECIAL) if (inRange(bytes, range)) return { public: false, family: 4, reason: range.reason }
  return { public: true, family: 4 }
}

const embeddedPublic = (bytes: Uint8Array, from: number, invert: boolean): boolean => {
  const v4bytes = Array.from(bytes.subarray(from, from + 4), (b) => (invert ? ~b & 0xff : b))
  return classifyV4Bytes(v4bytes).public
}

const classifyV6Bytes = (bytes: Uint8Array): AddressVerdict => {
  for (const range of IPV6_SPECIAL) if (inRange(bytes, range)) return { public: false, family: 6, reason: range.reason }
  if (inRange(bytes, TEREDO)) {
    // Teredo: server IPv4 in bits 32..63, client IPv4 (inverted) in the last 32 bits.
    return embeddedPublic(bytes, 4, false) && embeddedPublic(bytes, 12, true)
      ? { public: true, family: 6 }
      : { public: false, family: 6, reason: "teredo_embedded" }
  }
  if (inRange(bytes, IETF_V6)) return { public: false, family: 6, reason: "reserved" }
  if (inRange(bytes, SIX_TO_FOUR)) {
    return embeddedPublic(bytes, 2, false) ? { public: true, family: 6 } : { public: false, family: 6, reason: "6to4_embedded" }
  }
  if (!inRange(bytes, GLOBAL_UNICAST)) return { public: false, family: 6, reason: "reserved" }
  return { public: true, family: 6 }
}

/**
 * Classifies an IP address literal (dotted-quad IPv4, or IPv6 with or without brackets).
 * Undefined when the text is not an address.
 */
export const classifyAddress = (text: string): AddressVerdict | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const a4 = parseIpv4(bare)
  if (a4 !== undefined) return classifyV4Bytes(a4)
  const a6 = parseIpv6(bare)
  if (a6 !== undefined) return classifyV6Bytes(a6)
  return undefined
}

/** Dotted-quad text of 4 bytes. */
export const formatIpv4 = (bytes: ArrayLike<number>): string => Array.from(bytes).join(".")

/**
 * A host as it appears in a URL, reduced to an address literal when it is one (an IPv6 in
 * brackets, a dotted quad, or a legacy IPv4 form, which becomes a dotted quad). Undefined for a
 * name.
 */
export const hostAsAddress = (host: string): { readonly address: string; readonly family: AddressFamily } | undefined => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  if (parseIpv6(bare) !== undefined) return { address: bare, family: 6 }
  const loose = parseIpv4Loose(bare)
  if (loose !== undefined) return { address: formatIpv4(loose), family: 4 }
  return undefined
}

/** Names that always mean this machine or a local network, never a public host. */
const LOCAL_SUFFIXES = ["localhost", "local", "internal", "localdomain", "home.arpa"]

export type NameVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: "localhost" | "local_name" | "single_label" | "invalid_name" }

/** Judges a DNS name before it is resolved (the addresses it resolves to are judged after). */
export const classifyName = (host: string): NameVerdict => {
  const name = (host.endsWith(".") ? host.slice(0, -1) : host).toLowerCase()
  if (name === "" || name.length > 253 || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(name)) return { ok: false, reason: "invalid_name" }
  if (name === "localhost" || name.endsWith(".localhost")) return { ok: false, reason: "localhost" }
  for (const suffix of LOCAL_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return { ok: false, reason: "local_name" }
  }
  if (!name.includes(".")) return { ok: false, reason: "single_label" }
  return { ok: true }
}
