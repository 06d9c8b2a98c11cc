/**
 * What a route handler sees and returns, independent of uWS: a `Request` holding only what the
 * route declared it needs (uWS request objects die when the handler returns), and a `Reply`
 * written in one corked write. Static JSON documents are serialized once with their strong ETag
 * (`CachedJson`), so a conditional read costs a header comparison and no serialization.
 */
import { createHash } from "node:crypto"
import { type ApiError, errorEnvelope } from "../src/domain/ApiError.js"

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface Request {
  readonly method: Method
  /** Path without the query string, as received. */
  readonly path: string
  /** Raw query string without `?` (empty when none). */
  readonly query: string
  /** Path parameters in pattern order, URL-decoded. */
  readonly params: ReadonlyArray<string>
  /** Lower-cased header names → values, only the headers the route declared. */
  readonly headers: Readonly<Record<string, string>>
  /**
   * Parsed JSON body for routes that declare one; undefined otherwise. A route accepting other
   * media types (`body.accepts`) gets their bytes (`Uint8Array`) as sent.
   */
  readonly body: unknown
  /** The request's Content-Type, for routes that declare a body and were sent one. */
  readonly contentType?: string
  readonly remoteAddress: string
}

export type Header = readonly [name: string, value: string]

export interface Reply {
  readonly status: number
  readonly headers?: ReadonlyArray<Header>
  /** Absent for bodiless replies (304). */
  readonly body?: string | Uint8Array
  readonly contentType?: string
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8"

const STATUS_TEXT: Record<number, string> = {
  200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 304: "Not Modified",
  400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
  405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large", 414: "URI Too Long", 415: "Unsupported Media Type", 426: "Upgrade Required",
  429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
  503: "Service Unavailable", 504: "Gateway Timeout"
}

const statusLines = new Map<number, string>()
/** The status line uWS wants ("200 OK"), built once per status. */
export const statusLine = (status: number): string => {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_TEXT[status] ?? "Status"}`
    statusLines.set(status, line)
  }
  return line
}

/** Serializes bigint as a decimal string: money travels as strings (DESIGN.md). */
export const stringify = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))

export const json = (status: number, value: unknown, headers?: ReadonlyArray<Header>): Reply => ({
  status,
  body: stringify(value),
  contentType: JSON_CONTENT_TYPE,
  ...(headers !== undefined ? { headers } : {})
})

export const errorReply = (err: ApiError): Reply =>
  json(err.httpStatus, errorEnvelope(err), err.headers === undefined ? undefined : Object.entries(err.headers))

/** A JSON document serialized once, with a strong validator over its exact bytes. */
export class CachedJson {
  readonly body: Buffer
  readonly etag: string
  constructor(value: unknown) {
    this.body = Buffer.from(stringify(value), "utf8")
    this.etag = `"${createHash("sha256").update(this.body).digest("base64url").slice(0, 27)}"`
  }
}

/**
 * RFC 9110 §13.1.2: If-None-Match uses the weak comparison, so `W/"x"` matches `"x"`; `*` matches
 * any current representation.
 */
export const ifNoneMatchHits = (header: string | undefined, etag: string): boolean => {
  if (header === undefined || header === "") return false
  if (header.trim() === "*") return true
  for (const raw of header.split(",")) {
    let tag = raw.trim()
    if (tag.startsWith("W/")) tag = tag.slice(2)
    if (tag === etag) return true
  }
  return false
}

/** 200 with the cached bytes, or 304 with no body when the client's validator still matches. */
export const conditionalJson = (doc: CachedJson, ifNoneMatch: string | undefined, cacheControl: string): Reply => {
  const headers: ReadonlyArray<Header> = [["ETag", doc.etag], ["Cache-Control", cacheControl]]
  return ifNoneMatchHits(ifNoneMatch, doc.etag)
    ? { status: 304, headers }
    : { status: 200, headers, body: doc.body, contentType: JSON_CONTENT_TYPE }
}
