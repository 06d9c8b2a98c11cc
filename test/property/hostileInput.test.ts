/**
 * The hostile-input suite (hardening issue 17, item 7): a property-based fuzzer driven by both
 * OpenAPI documents of a really started engine (`src/main.ts` with its embedded PGlite, chDB,
 * bus and localnets). Every documented operation is a target; each generated request mixes wrong
 * types, huge and odd numbers, long and control-character strings, NUL, escapes that are not
 * UTF-8, unpaired surrogates, deep nesting, missing and extra fields, wrong content types, body
 * bytes that are not UTF-8, wrong methods and bad, missing or mismatched credentials.
 *
 * It asserts that no request is answered 5xx (apart from the configuration states the spec
 * answers 5xx whatever the input: `ALLOWED_5XX`), that every refusal carries the error envelope
 * (or the market-data service's plain `{error}`), that every answer is what the answering
 * service's OpenAPI document says (its status documented for the operation, or one of the
 * router's own refusals, and its JSON body valid against that response's schema: the same check
 * as the end-to-end suites, `test/support/contract.ts`), and that `/readyz` stays 200 throughout.
 *
 * Requests with bad credentials come from a second loopback address (127.0.0.2) so the
 * failed-authentication throttle they trip does not starve the well-credentialed ones.
 *
 * Budget: `CURVESTREAM_FUZZ_MS` milliseconds of requests (default 20 s, what `npm test` runs);
 * a soak sets it higher (`CURVESTREAM_FUZZ_MS=600000 npx vitest run test/property/hostileInput.test.ts`).
 * The seed is printed; `CURVESTREAM_FUZZ_SEED` replays one.
 */
import fc from "fast-check"
import * as http from "node:http"
import { beforeAll, describe, expect, it } from "vitest"
import { type ContractDocument, contractDocument, contractProblems } from "../support/contract.js"
import { engineForFile } from "../support/engineForFile.js"

const budgetMs = Number(process.env.CURVESTREAM_FUZZ_MS ?? 20_000)
const seed = process.env.CURVESTREAM_FUZZ_SEED !== undefined ? Number(process.env.CURVESTREAM_FUZZ_SEED) : Date.now() % 2 ** 31

/**
 * 5xx answers that are the engine's configuration, not an outage or an input error: the spec's
 * `VALIDATION_FAILED` 501 without a block engine, and rails switched off by configuration.
 */
const ALLOWED_5XX: ReadonlyArray<readonly [number, string]> = [
  [501, "VALIDATION_FAILED"],
  [503, "LAUNCH_DISABLED"],
  [503, "HOOD_LAUNCH_UNAVAILABLE"]
]

type Json = Record<string, any>

interface Operation {
  readonly base: string
  readonly service: "api" | "data"
  readonly method: string
  readonly path: string
  readonly params: ReadonlyArray<{ readonly name: string; readonly in: "path" | "query" }>
  readonly bodyFields: ReadonlyArray<string> | undefined
  readonly contentTypes: ReadonlyArray<string>
  readonly security: string | undefined
  /** Statuses the document answers with the plain `{error}` body (`PlainError`) rather than the envelope. */
  readonly plainStatuses: ReadonlySet<number>
  /** The answering service's document, registered with the contract check. */
  readonly contract: ContractDocument
}

const started = engineForFile({ args: ["--quiet"] })
let operations: ReadonlyArray<Operation> = []

const propertyNames = (schema: Json | undefined, components: Json, depth = 0): Array<string> => {
  if (schema === undefined || depth > 4) return []
  if (typeof schema.$ref === "string") return propertyNames(components[schema.$ref.split("/").pop()!], components, depth + 1)
  const own = schema.properties !== undefined ? Object.keys(schema.properties) : []
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].flatMap((s: Json) => propertyNames(s, components, depth + 1))
  return [...new Set([...own, ...nested])]
}

const operationsOf = (doc: Json, base: string, service: Operation["service"]): Array<Operation> => {
  const contract = contractDocument(doc)
  return Object.entries(doc.paths as Json).flatMap(([p, ops]) =>
    Object.entries(ops as Json).map(([method, op]: [string, Json]) => {
      const content = op.requestBody?.content as Json | undefined
      return {
        base,
        service,
        method: method.toUpperCase(),
        path: p,
        params: ((op.parameters ?? []) as Array<Json>).map((x) => ({ name: x.name as string, in: x.in as "path" | "query" })),
        bodyFields: content === undefined ? undefined : propertyNames(Object.values(content)[0]?.schema, doc.components?.schemas ?? {}),
        contentTypes: content === undefined ? [] : Object.keys(content),
        security: (op.security as Array<Json> | undefined)?.map((s) => Object.keys(s)[0])[0],
        plainStatuses: new Set(
          Object.entries((op.responses ?? {}) as Json)
            .filter(([, r]) => (r as Json).content?.["application/json"]?.schema?.$ref === "#/components/schemas/PlainError")
            .map(([status]) => Number(status))
        ),
        contract
      }
    })
  )
}

beforeAll(async () => {
  const apiDoc = (await (await fetch(`${started.engine.url}/api/v1/openapi.json`)).json()) as Json
  const dataDoc = (await (await fetch(`${started.dataUrl}/v1/openapi.json`)).json()) as Json
  operations = [...operationsOf(apiDoc, started.engine.url, "api"), ...operationsOf(dataDoc, started.dataUrl, "data")]
})

// ---------------------------------------------------------------------------------------------
// Hostile values.

const oddStrings = fc.constantFrom(
  "", " ", "\u0000", "a\u0000b", "\ud800", "x\udfffy", "\u0007\u001b[31m", "\r\n", "\uffff", "\ufeff", "😀", "é",
  "../../etc/passwd", "' OR 1=1 --", "${jndi:ldap://x}", "<script>", "null", "true", "[]", "{}",
  "-1", "0", "-0", "1e309", "NaN", "Infinity", "0x10", "1.5", "9".repeat(40), "123456789012345678901234567890",
  "solana", "hood", "sol", "usdc", "svc", "eth", "usdg", "So11111111111111111111111111111111111111112", `0x${"ab".repeat(20)}`
)
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: oddStrings },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c)), maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }).map((n) => "a".repeat(n)) }
)
const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, 2 ** 64, -0, 0.1, 1e-320, -1)
)
const leaf: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null))
const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(hostileString, tie("v"), { maxKeys: 4 }))
})).v

/** A raw URL component: escaped hostile text, or escapes that are NUL, not UTF-8 or malformed. */
const urlComponent: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: hostileString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "\ufffd"))) },
  { weight: 1, arbitrary: fc.constantFrom("%00", "%ff", "a%00b", "%C3%28", "%", "%zz", "..", "%2e%2e", "%ED%A0%80", "+", "%2F") }
)

const deepText = fc.integer({ min: 30, max: 6_000 }).chain((depth) =>
  fc.constantFrom("[", '{"a":').map((open) => open.repeat(depth) + "1" + (open === "[" ? "]" : "}").repeat(depth))
)

interface Body {
  readonly bytes: Uint8Array | undefined
  readonly contentType: string | undefined
}

const bodyFor = (op: Operation): fc.Arbitrary<Body> => {
  const shaped: fc.Arbitrary<unknown> =
    op.bodyFields !== undefined && op.bodyFields.length > 0
      ? fc.tuple(fc.subarray([...op.bodyFields]), fc.dictionary(hostileString, leaf, { maxKeys: 2 })).chain(([fields, extra]) =>
          fc.tuple(...fields.map(() => jsonValue)).map((values) => ({ ...extra, ...Object.fromEntries(fields.map((f, i) => [f, values[i]])) }))
        )
      : jsonValue
  const text: fc.Arbitrary<Uint8Array | undefined> = fc.oneof(
    { weight: 4, arbitrary: shaped.map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
    { weight: 1, arbitrary: jsonValue.map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
    { weight: 1, arbitrary: deepText.map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: fc.constant(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, Buffer.from(""), Buffer.from("{"), Buffer.from('{"a":1}{')) }
  )
  const contentType = fc.oneof(
    { weight: 4, arbitrary: fc.constant("application/json") },
    { weight: 2, arbitrary: fc.constantFrom(...(op.contentTypes.length > 0 ? op.contentTypes : ["application/json"])) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(undefined, "text/plain", "application/json; charset=latin1", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "image/png", "*/*", "")
    }
  )
  return fc.record({ bytes: text, contentType })
}

type Credential = { readonly header: readonly [string, string] | undefined; readonly bad: boolean }

const credentialFor = (op: Operation): fc.Arbitrary<Credential> => {
  const good: Credential =
    op.security === "agentKey"
      ? { header: ["x-api-key", started.credentials.agentKey], bad: false }
      : op.security === "session"
        ? { header: ["authorization", `Bearer ${started.credentials.sessionToken}`], bad: false }
        : op.security === "bearer"
          ? { header: ["authorization", `Bearer ${started.credentials.agentKey}`], bad: false }
          : { header: undefined, bad: false }
  const bad = fc.oneof(
    fc.constant<Credential>({ header: undefined, bad: true }),
    fc
      .tuple(
        fc.constantFrom("x-api-key", "authorization"),
        fc.oneof(
          fc.constantFrom("Bearer", "Bearer ", `Bearer ${started.credentials.agentKey}x`, started.credentials.sessionToken, `svc_live_${"1".repeat(52)}`, `Basic ${started.credentials.agentKey}`, "svc_test_x"),
          hostileString.map((s) => s.replace(/[^\x20-\x7e]/g, "")),
          fc.constant(`Bearer ${started.credentials.agentKey}`),
          fc.constant(started.credentials.agentKey)
        )
      )
      .map(([name, value]): Credential => ({ header: [name, value], bad: true }))
  )
  return fc.oneof({ weight: 3, arbitrary: fc.constant(good) }, { weight: 2, arbitrary: bad })
}

interface HostileRequest {
  readonly op: Operation
  readonly method: string
  readonly target: string
  readonly credential: Credential
  readonly body: Body
}

const requestFor = (op: Operation): fc.Arbitrary<HostileRequest> => {
  const pathParams = op.params.filter((p) => p.in === "path")
  const queryParams = op.params.filter((p) => p.in === "query").map((p) => p.name)
  const query = fc
    .tuple(
      fc.subarray(queryParams),
      fc.array(fc.tuple(fc.oneof(fc.constantFrom(...(queryParams.length > 0 ? queryParams : ["x"])), urlComponent), urlComponent), { maxLength: 3 })
    )
    .chain(([names, extra]) => fc.tuple(...names.map(() => urlComponent)).map((values) => [...names.map((n, i) => [n, values[i]!] as const), ...extra]))
    .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"))
  return fc.record({
    op: fc.constant(op),
    method: fc.oneof({ weight: 9, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD") }),
    target: fc.tuple(fc.tuple(...pathParams.map(() => urlComponent)), query).map(([values, q]) => {
      let i = 0
      const p = op.path.replace(/\{[^}]+\}/g, () => values[i++] ?? "x")
      return q === "" ? p : `${p}?${q}`
    }),
    credential: credentialFor(op),
    body: bodyFor(op)
  })
}

// ---------------------------------------------------------------------------------------------
// Sending and judging.

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
const badAgent = new http.Agent({ keepAlive: true, maxSockets: 4 })

const send = (r: HostileRequest): Promise<{ status: number; contentType: string | undefined; body: string }> =>
  new Promise((resolve, reject) => {
    const url = new URL(r.op.base)
    const headers: Record<string, string> = {}
    if (r.credential.header !== undefined) headers[r.credential.header[0]] = r.credential.header[1]
    const sendsBody = r.body.bytes !== undefined && r.method !== "GET" && r.method !== "HEAD"
    if (sendsBody && r.body.contentType !== undefined) headers["content-type"] = r.body.contentType
    // Node frames a DELETE or OPTIONS body neither by length nor chunked unless told: always say its length.
    if (sendsBody) headers["content-length"] = String(r.body.bytes!.byteLength)
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.target,
        headers,
        agent: r.credential.bad ? badAgent : agent,
        ...(r.credential.bad ? { localAddress: "127.0.0.2" } : {}),
        timeout: 15_000
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"], body: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      }
    )
    req.on("timeout", () => req.destroy(new Error("no answer within 15 s")))
    req.on("error", reject)
    if (sendsBody) req.end(r.body.bytes)
    else req.end()
  })

const describeRequest = (r: HostileRequest) =>
  `${r.method} ${r.op.service}${r.target.slice(0, 300)} credential=${r.credential.bad ? "bad" : "good"}:${r.credential.header?.[0] ?? "none"} ` +
  `content-type=${String(r.body.contentType)} body=${r.body.bytes === undefined ? "none" : Buffer.from(r.body.bytes).toString("utf8").slice(0, 300)}`

/** About how many bytes the request head takes (request line, credential and the headers Node adds). */
const headBytes = (r: HostileRequest): number => Buffer.byteLength(r.target) + Buffer.byteLength(r.credential.header?.[1] ?? "") + 200

/** Why an answer breaks the contract, or undefined. */
const problemWith = (r: HostileRequest, status: number, contentType: string | undefined, body: string): string | undefined => {
  if (r.method === "HEAD") return undefined
  // The uWS build answers a request head over 4 KiB itself, before any route (README, "Behind a proxy").
  if (status === 431 && headBytes(r) > 4096) return undefined
  // The document's word on this answer: a documented status and a body its schema accepts.
  // The path as sent (a URL parser would resolve `..` segments the router takes as values).
  const off = contractProblems(r.op.contract, r.method, r.target.split("?")[0]!, status, contentType, body)
  if (off.length > 0) return `not what the document says: ${off.join("; ")}: ${body.slice(0, 300)}`
  if (status < 400) return undefined
  let parsed: Json
  try {
    parsed = JSON.parse(body)
  } catch {
    return `${status} without a JSON body: ${body.slice(0, 200)}`
  }
  const enveloped = parsed.success === false && typeof parsed.error?.code === "string" && typeof parsed.error?.message === "string"
  // The market-data service answers its auth and plan refusals plainly on every route; elsewhere where documented.
  const plain = (r.op.service === "data" || r.op.plainStatuses.has(status)) && typeof parsed.error === "string"
  if (!enveloped && !plain) return `${status} without the error envelope: ${body.slice(0, 200)}`
  if (status >= 500 && !ALLOWED_5XX.some(([s, code]) => s === status && parsed.error?.code === code)) return `${status}: ${body.slice(0, 300)}`
  return undefined
}

describe("hostile input against the started engine", () => {
  it(`no 5xx, the envelope on every refusal, /readyz 200 throughout (${budgetMs} ms of requests)`, async () => {
    console.log(`hostile-input fuzzer: seed=${seed} budgetMs=${budgetMs} operations=${operations.length} (replay with CURVESTREAM_FUZZ_SEED=${seed})`)
    expect(operations.length).toBeGreaterThan(80)
    const readiness: Array<number> = []
    let probing = true
    const prober = (async () => {
      while (probing) {
        readiness.push(await fetch(`${started.engine.url}/readyz`).then((r) => r.status, () => 0))
        await new Promise((r) => setTimeout(r, 250))
      }
    })()
    let sent = 0
    const statuses = new Map<number, number>()
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: operations.length - 1 }).chain((i) => requestFor(operations[i]!)),
          async (r) => {
            let answer: { status: number; contentType: string | undefined; body: string }
            try {
              answer = await send(r)
            } catch (e) {
              // The build's own 431 (a head over 4 KiB) has a body framed only by `Connection: close`, which Node's parser refuses.
              if ((e as { code?: string }).code === "HPE_CLOSED_CONNECTION" && headBytes(r) > 4096) {
                statuses.set(431, (statuses.get(431) ?? 0) + 1)
                return
              }
              throw new Error(`no answer (${String(e)})\n  request: ${describeRequest(r)}`)
            }
            const { body, contentType, status } = answer
            sent++
            statuses.set(status, (statuses.get(status) ?? 0) + 1)
            const problem = problemWith(r, status, contentType, body)
            if (problem !== undefined) throw new Error(`${problem}\n  request: ${describeRequest(r)}`)
          }
        ),
        { seed, numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: budgetMs, endOnFailure: true }
      )
    } finally {
      probing = false
      await prober
      console.log(`hostile-input fuzzer: ${sent} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
    }
    expect(sent).toBeGreaterThan(50)
    expect(readiness.length).toBeGreaterThan(0)
    expect(readiness.filter((s) => s !== 200)).toEqual([])
    expect((await fetch(`${started.engine.url}/readyz`)).status).toBe(200)
  }, budgetMs + 60_000)
})
