/**
 * What a market's on-chain metadata URI says beyond name and symbol (launch spec 2.1 `description`,
 * `socials`, `bannerUrl`; 2.9 `metadata`; the data service's profile). A launch made here points its
 * URI at a metadata document this engine hosts, content-addressed
 * (`<base>/api/v1/uploads/metadata/<sha256>.json`); the read side cannot fetch on a read, so every
 * process that serves reads holds the documents' fields in this directory, told by the launching
 * process before its transaction leaves and by a follower of the stored documents in the others
 * (`src/services/images/HostedMetadata.ts`).
 *
 * Invariants:
 * - Keyed by the document id (the SHA-256 in the URI), so a document reads the same under any
 *   public base URL. A document never changes: `add` of a known id is a no-op.
 * - Bounded: at most `maxEntries` (default 1,000,000, the market budget's order); beyond it the
 *   oldest is forgotten and its market reads as a document not yet known.
 * - `viewOf` is total: a URI that is not one of our documents (a launch made before documents, or
 *   an external mint) reads as before documents existed: the URI is the image, no description,
 *   no socials. One of ours not known yet reads with no image, description or socials.
 * - Single JS thread: synchronous map lookups. A read built while its document was unknown
 *   (`isPending`) is rebuilt by its cache once the document arrives.
 */
import { Context } from "effect"

export const TOKEN_METADATA_MAX = 1_000_000

export const SocialNames = ["twitter", "telegram", "website", "discord"] as const

export interface TokenMetadataView {
  readonly image: string | null
  readonly banner: string | null
  readonly description: string | null
  /** The links the launch gave (only the spec's four), or null when it gave none. */
  readonly socials: Readonly<Partial<Record<(typeof SocialNames)[number], string>>> | null
}

export interface TokenMetadataRead {
  /** The fields of the document a URI names: undefined when the URI is not ours or not known yet. */
  readonly get: (uri: string) => TokenMetadataView | undefined
}

const documentUri = /\/api\/v1\/uploads\/metadata\/([0-9a-f]{64})\.json$/

/** The document id a URI of ours names, else undefined. */
export const metadataIdOfUri = (uri: string): string | undefined => documentUri.exec(uri)?.[1]

const unknownDocument: TokenMetadataView = { image: null, banner: null, description: null, socials: null }

/** True when the URI names one of our documents this lookup does not know (yet). */
export const isPending = (uri: string, lookup: TokenMetadataRead | undefined): boolean =>
  metadataIdOfUri(uri) !== undefined && lookup?.get(uri) === undefined

/** What a read shows for a market's URI (see the invariants). */
export const viewOf = (uri: string, lookup: TokenMetadataRead | undefined): TokenMetadataView => {
  if (metadataIdOfUri(uri) === undefined) return { image: uri === "" ? null : uri, banner: null, description: null, socials: null }
  return lookup?.get(uri) ?? unknownDocument
}

export class TokenMetadataDirectory implements TokenMetadataRead {
  private readonly byId = new Map<string, TokenMetadataView>()

  constructor(readonly maxEntries: number = TOKEN_METADATA_MAX) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError("TokenMetadataDirectory: maxEntries must be a positive integer")
  }

  /** Records a document's fields; false when the id was known already. */
  add(id: string, view: TokenMetadataView): boolean {
    if (this.byId.has(id)) return false
    if (this.byId.size >= this.maxEntries) this.byId.delete(this.byId.keys().next().value!)
    this.byId.set(id, view)
    return true
  }

  readonly get = (uri: string): TokenMetadataView | undefined => {
    const id = metadataIdOfUri(uri)
    return id === undefined ? undefined : this.byId.get(id)
  }

  get size(): number {
    return this.byId.size
  }
}

/** The process's one directory (provided with the MarketIndex, which reads it for records and feed rows). */
export class TokenMetadataRegistry extends Context.Tag("curvestream/TokenMetadataRegistry")<TokenMetadataRegistry, TokenMetadataDirectory>() {}
