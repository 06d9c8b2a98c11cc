/**
 * Who the client is behind trusted proxies (`TRUSTED_PROXIES`): the convention every server
 * framework has. A request whose connection comes from a trusted address carries the client in
 * `X-Forwarded-For`; walking that list from the right (each entry was appended by the hop after
 * it), the client is the first address that is not trusted. Pure; no I/O.
 *
 * Invariants:
 * - A connection from an untrusted address is its own client, whatever its headers say (a spoofed
 *   `X-Forwarded-For` changes nothing).
 * - A malformed entry stops the walk: the client is the trusted hop that forwarded it (it cannot
 *   be told apart further, and an attacker cannot name a bucket of their choosing).
 * - Every address in the chain trusted: the leftmost (the first hop we know of).
 * - Bounded: at most `MAX_FORWARDED_HOPS` entries are read from the right; past them the walk
 *   stops as at a malformed entry.
 * - IPv4-mapped IPv6 (`::ffff:a.b.c.d`, which a dual-stack listener reports for IPv4 peers) is the
 *   IPv4 address, for rules and entries alike.
 */

/** An address as bytes: 4 (IPv4) or 16 (IPv6). */
export type IpBytes = Uint8Array

export interface ProxyRule {
  readonly bytes: IpBytes
  readonly prefixBits: number
}

export interface ProxyTrust {
  readonly rules: ReadonlyArray<ProxyRule>
}

export const MAX_FORWARDED_HOPS = 32

const parseIpv4 = (s: string): IpBytes | undefined => {
  const parts = s.split(".")
  if (parts.length !== 4) return undefined
  const out = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === "0")) return undefined
    const n = Number(p)
    if (n > 255) return undefined
    out[i] = n
  }
  return out
}

const parseIpv6 = (s: string): IpBytes | undefined => {
  if (s.length === 0 || s.length > 45) return undefined
  let head = s
  let v4: IpBytes | undefined
  const lastColon = s.lastIndexOf(":")
  if (s.indexOf(".", lastColon) !== -1) {
    v4 = parseIpv4(s.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    head = s.slice(0, lastColon + 1) + "0:0"
  }
  const double = head.indexOf("::")
  if (double !== -1 && head.indexOf("::", double + 1) !== -1) return undefined
  const groupsOf = (part: string): string[] | undefined => (part === "" ? [] : part.split(":"))
  const left = groupsOf(double === -1 ? head : head.slice(0, double))
  const right = double === -1 ? [] : groupsOf(head.slice(double + 2))
  if (left === undefined || right === undefined) return undefined
  const missing = 8 - left.length - right.length
  if (double === -1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...left, ...new Array<string>(double === -1 ? 0 : missing).fill("0"), ...right]
  const out = new Uint8Array(16)
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
    const n = parseInt(g, 16)
    out[2 * i] = n >> 8
    out[2 * i + 1] = n & 0xff
  }
  if (v4 !== undefined) out.set(v4, 12)
  return out
}

/** An IPv4-mapped IPv6 address as its IPv4 bytes; anything else unchanged. */
export const unmapped = (b: IpBytes): IpBytes => {
  if (b.length !== 16) return b
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return b
  return b[10] === 0xff && b[11] === 0xff ? b.subarray(12) : b
}

/** An address as written (IPv4 dotted, IPv6 with `::` and an IPv4 tail allowed, brackets allowed), unmapped; undefined when malformed. */
export const parseIp = (text: string): IpBytes | undefined => {
  const s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const b = s.includes(":") ? parseIpv6(s) : parseIpv4(s)
  return b === undefined ? undefined : unmapped(b)
}

/** The text this engine writes for an address: IPv4 dotted, IPv6 as 8 groups of 4 lowercase hex digits (uWS's own form). */
export const formatIp = (b: IpBytes): string => {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16).padStart(4, "0"))
  return groups.join(":")
}

/**
 * `TRUSTED_PROXIES`: comma-separated addresses and CIDR blocks (`10.0.0.0/8`, `::1`,
 * `fd00::/8`). Empty: no proxy is trusted. The first bad entry is named in the error.
 */
export const parseProxyTrust = (text: string): { readonly trust: ProxyTrust } | { readonly error: string } => {
  const rules: ProxyRule[] = []
  for (const raw of text.split(",")) {
    const entry = raw.trim()
    if (entry === "") continue
    const slash = entry.indexOf("/")
    const addr = slash === -1 ? entry : entry.slice(0, slash)
    const bytes = parseIp(addr)
    if (bytes === undefined) return { error: `'${entry}' is not an IPv4 or IPv6 address or CIDR block` }
    const maxBits = bytes.length * 8
    // A `/n` written on an IPv4-mapped address counts from the IPv6 form's 96-bit prefix.
    const mappedOffset = bytes.length === 4 && addr.includes(":") ? 96 : 0
    let prefixBits = maxBits
    if (slash !== -1) {
      const bits = entry.slice(slash + 1)
      if (!/^\d{1,3}$/.test(bits)) return { error: `'${entry}' has a malformed prefix length` }
      prefixBits = Number(bits) - mappedOffset
      if (prefixBits < 0 || prefixBits > maxBits) return { error: `'${entry}' has a prefix length out of range` }
    }
    rules.push({ bytes, prefixBits })
  }
  return { trust: { rules } }
}

const matches = (rule: ProxyRule, b: IpBytes): boolean => {
  if (rule.bytes.length !== b.length) return false
  const whole = rule.prefixBits >> 3
  for (let i = 0; i < whole; i++) if (rule.bytes[i] !== b[i]) return false
  const rest = rule.prefixBits & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (rule.bytes[whole]! & mask) === (b[whole]! & mask)
}

export const isTrusted = (trust: ProxyTrust, b: IpBytes): boolean => {
  const u = unmapped(b)
  for (const rule of trust.rules) if (matches(rule, u)) return true
  return false
}

/**
 * The client of a connection from `peer` carrying `forwardedFor` (the header's value, "" when
 * absent): its text (`formatIp`), or undefined when the peer is not trusted (the peer is the
 * client: the caller keeps the address it had, unchanged).
 */
export const clientBehind = (trust: ProxyTrust, peer: IpBytes, forwardedFor: string): string | undefined => {
  if (!isTrusted(trust, peer)) return undefined
  let current = unmapped(peer)
  let end = forwardedFor.length
  for (let hops = 0; end > 0 && hops < MAX_FORWARDED_HOPS; hops++) {
    const comma = forwardedFor.lastIndexOf(",", end - 1)
    const entry = forwardedFor.slice(comma + 1, end).trim()
    end = comma === -1 ? 0 : comma
    if (entry === "") continue
    const next = parseIp(stripPort(entry))
    if (next === undefined) break
    current = next
    if (!isTrusted(trust, next)) break
  }
  return formatIp(current)
}

/** `1.2.3.4:5678` and `[::1]:5678` (some proxies append the port) to their address. */
const stripPort = (entry: string): string => {
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]")
    return close === -1 ? entry : entry.slice(0, close + 1)
  }
  const colon = entry.indexOf(":")
  return colon !== -1 && colon === entry.lastIndexOf(":") && entry.includes(".") ? entry.slice(0, colon) : entry
}
