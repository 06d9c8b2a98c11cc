/**
 * The metadata document of a launch (issue 31): the JSON wallets and explorers read from a token's
 * metadata URI (Metaplex's fungible-token shape: `name`, `symbol`, `description`, `image`,
 * `external_url`; the links under `extensions`, as token lists carry them; the banner there too).
 * Pure. Served at `<base>/api/v1/uploads/metadata/<id>.json`, `id` the SHA-256 of the bytes.
 *
 * Invariants:
 * - Deterministic: the same fields give the same bytes (members in a fixed order, absent ones
 *   omitted), so a dry run's URI (and the Solana size it measures) is the launch's.
 * - `viewOfDocument(tokenMetadataDocument(f))` gives back the fields the reads serve; bytes that are
 *   not such a document give undefined (never a throw).
 */
import { createHash } from "node:crypto"
import { SocialNames, type TokenMetadataView } from "../../../actors/TokenMetadata.js"

export const hostedMetadataPrefix = "/api/v1/uploads/metadata/"

export interface TokenMetadataFields {
  readonly name: string
  readonly symbol: string
  readonly description: string | null
  /** The hosted image URL. */
  readonly image: string
  /** The hosted banner URL, when the launch gave one. */
  readonly banner: string | null
  readonly socials: Readonly<Partial<Record<(typeof SocialNames)[number], string>>>
}

const encoder = new TextEncoder()

export const tokenMetadataDocument = (f: TokenMetadataFields): Uint8Array => {
  const extensions: Record<string, string> = {}
  for (const name of SocialNames) {
    const url = f.socials[name]
    if (url !== undefined) extensions[name] = url
  }
  if (f.banner !== null) extensions["banner"] = f.banner
  return encoder.encode(
    JSON.stringify({
      name: f.name,
      symbol: f.symbol,
      ...(f.description !== null ? { description: f.description } : {}),
      image: f.image,
      ...(f.socials.website !== undefined ? { external_url: f.socials.website } : {}),
      ...(Object.keys(extensions).length > 0 ? { extensions } : {})
    })
  )
}

export const metadataIdOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** `base` is the engine's public URL (a path prefix is kept). */
export const metadataUrl = (base: string, id: string): string => `${base.replace(/\/+$/, "")}${hostedMetadataPrefix}${id}.json`

/** The id a served file name (`<id>.json`) names, else undefined. */
export const parseMetadataFile = (file: string): string | undefined => /^([0-9a-f]{64})\.json$/.exec(file)?.[1]

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const text = (v: unknown): string | null => (typeof v === "string" ? v : null)

/** The fields a read serves from a stored document; undefined for bytes that are not one. */
export const viewOfDocument = (bytes: Uint8Array): TokenMetadataView | undefined => {
  let doc: unknown
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    return undefined
  }
  if (!isRecord(doc) || typeof doc["image"] !== "string") return undefined
  const extensions = isRecord(doc["extensions"]) ? doc["extensions"] : {}
  const socials: Partial<Record<(typeof SocialNames)[number], string>> = {}
  for (const name of SocialNames) {
    const url = text(extensions[name])
    if (url !== null) socials[name] = url
  }
  return {
    image: doc["image"],
    banner: text(extensions["banner"]),
    description: text(doc["description"]),
    socials: Object.keys(socials).length > 0 ? socials : null
  }
}
