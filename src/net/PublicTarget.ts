/**
 * The public-target check for server-side requests: a URL is acceptable when it is HTTPS and its
 * host is, or resolves only to, public addresses (`PublicAddress`). The check returns the address
 * it approved, and the caller connects to exactly that address (`PinnedRequest`), so a name that
 * re-resolves to a private address between the check and the connection (DNS rebinding) gains
 * nothing.
 *
 * Invariants:
 * - Every address a name resolves to must be public; one non-public answer refuses the target.
 * - Resolution is bounded (`resolveTimeoutMs`) and its failure refuses the target.
 * - `allowLoopback` (tests only) admits loopback addresses, `localhost`, and `http:` for them;
 *   it never admits any other non-public address, and an `http:` URL must be loopback.
 */
import { promises as dns } from "node:dns"
import { Effect, Schema } from "effect"
import { type AddressFamily, classifyAddress, classifyName, hostAsAddress, type NonPublicReason } from "./PublicAddress.js"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Resolves a DNS name to every address (the system resolver by default). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true })

export type TargetRefusalReason =
  | "invalid_url"
  | "not_https"
  | "credentials_in_url"
  | "localhost"
  | "local_name"
  | "single_label"
  | "invalid_name"
  | "unresolvable"
  | NonPublicReason

export class TargetRefused extends Schema.TaggedError<TargetRefused>()("TargetRefused", {
  reason: Schema.String,
  message: Schema.String,
  address: Schema.optional(Schema.String)
}) {
  get refusal(): TargetRefusalReason {
    return this.reason as TargetRefusalReason
  }
}

export interface TargetPolicy {
  /** Tests only: admit loopback targets (and `http:` to them). Off in production. */
  readonly allowLoopback: boolean
  readonly resolve: Resolver
  /** Deadline of one resolution. */
  readonly resolveTimeoutMs: number
}

export interface CheckedTarget {
  readonly url: URL
  readonly protocol: "https:" | "http:"
  /** Host as written (name, or address without brackets). */
  readonly hostname: string
  readonly port: number
  /** The approved address to connect to. */
  readonly address: string
  readonly family: AddressFamily
  /** TLS SNI and certificate name: the host name; undefined for an address literal. */
  readonly servername: string | undefined
  readonly isLoopback: boolean
}

/** Longest URL accepted (bytes of its text). */
export const maxUrlLength = 2048

const refuse = (reason: TargetRefusalReason, message: string, address?: string) =>
  new TargetRefused(address === undefined ? { reason, message } : { reason, message, address })

const describe: Record<NonPublicReason, string> = {
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  private: "a private address",
  cgnat: "a carrier-grade NAT address",
  link_local: "a link-local address",
  documentation: "a documentation address",
  benchmarking: "a benchmarking address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
  ipv4_mapped: "an IPv4-mapped IPv6 address",
  ipv4_compatible: "an IPv4-compatible IPv6 address",
  nat64: "a NAT64 address",
  "6to4_embedded": "a 6to4 address embedding a non-public IPv4 address",
  teredo_embedded: "a Teredo address embedding a non-public IPv4 address",
  unique_local: "a unique-local IPv6 address",
  site_local: "a site-local IPv6 address",
  discard: "a discard-only address",
  orchid: "an ORCHID address"
}

/** Parses the URL and judges everything that needs no network: scheme, credentials, host form. */
export const parseTargetUrl = (
  text: string,
  allowLoopback: boolean
): { readonly url: URL; readonly hostname: string; readonly port: number } | TargetRefused => {
  if (text.length > maxUrlLength) return refuse("invalid_url", `url must be at most ${maxUrlLength} characters`)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return refuse("invalid_url", "url is not a valid absolute URL")
  }
  if (url.protocol !== "https:" && !(allowLoopback && url.protocol === "http:")) {
    return refuse("not_https", "url must use https")
  }
  if (url.username !== "" || url.password !== "") return refuse("credentials_in_url", "url must not carry credentials")
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
  return { url, hostname, port }
}

const judgeAddress = (address: string, allowLoopback: boolean): TargetRefused | { loopback: boolean; family: AddressFamily } => {
  const verdict = classifyAddress(address)
  if (verdict === undefined) return refuse("unresolvable", `resolver returned a non-address '${address}'`)
  if (verdict.public) return { loopback: false, family: verdict.family }
  if (verdict.reason === "loopback" && allowLoopback) return { loopback: true, family: verdict.family }
  return refuse(verdict.reason, `url resolves to ${describe[verdict.reason]} (${address}); only public addresses are allowed`, address)
}

const withDeadline = <A>(promise: Promise<A>, ms: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
    promise.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e instanceof Error ? e : new Error(String(e)))
      }
    )
  })

/**
 * Checks a target URL and returns the address to connect to. Used at registration and again
 * before every delivery.
 */
export const checkTarget = (text: string, policy: TargetPolicy): Effect.Effect<CheckedTarget, TargetRefused> =>
  Effect.gen(function* () {
    const parsed = parseTargetUrl(text, policy.allowLoopback)
    if (parsed instanceof TargetRefused) return yield* parsed
    const { url, hostname, port } = parsed
    const protocol = url.protocol as "https:" | "http:"

    let addresses: ReadonlyArray<ResolvedAddress>
    const literal = hostAsAddress(hostname)
    if (literal !== undefined) addresses = [literal]
    else {
      const name = classifyName(hostname)
      if (!name.ok && !(name.reason === "localhost" && policy.allowLoopback)) {
        return yield* refuse(
          name.reason,
          name.reason === "single_label"
            ? "url host must be a fully qualified public name"
            : name.reason === "invalid_name"
              ? "url host is not a valid name"
              : `url host '${hostname}' names a local machine or network`
        )
      }
      addresses = yield* Effect.tryPromise({
        try: () => withDeadline(policy.resolve(hostname), policy.resolveTimeoutMs),
        catch: (e) => refuse("unresolvable", `url host '${hostname}' did not resolve: ${e instanceof Error ? e.message : String(e)}`)
      })
      if (addresses.length === 0) return yield* refuse("unresolvable", `url host '${hostname}' did not resolve`)
    }

    let loopback = true
    let first: { address: string; family: AddressFamily } | undefined
    for (const a of addresses) {
      const judged = judgeAddress(a.address, policy.allowLoopback)
      if (judged instanceof TargetRefused) return yield* judged
      loopback &&= judged.loopback
      first ??= { address: a.address, family: judged.family }
    }
    if (protocol === "http:" && !loopback) return yield* refuse("not_https", "url must use https")
    return {
      url,
      protocol,
      hostname,
      port,
      address: first!.address,
      family: first!.family,
      servername: literal === undefined ? hostname : undefined,
      isLoopback: loopback
    }
  })
