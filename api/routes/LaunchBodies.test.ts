/**
 * The launch write routes' bodies through the real router over HTTP (`selfLaunchRoutes`,
 * `atomicLaunchRoutes`): a body the route's Schema refuses is a 400 `VALIDATION_FAILED` naming the
 * first bad field, and the launch service is not reached. The key check and the service are
 * counting stand-ins on purpose (as in `test/conformance/launchRefusals.test.ts`'s in-process
 * rows): these cases assert that decoding refuses before either service call, and that a body
 * that decodes reaches the service decoded once, as the typed value.
 */
import { getBase58Decoder } from "@solana/kit"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import type { AtomicLaunchShape } from "../../src/services/launch/atomic/AtomicLaunch.js"
import type { SelfLaunchShape } from "../../src/services/launch/SelfLaunch.js"
import { mountRoutes } from "../../test/support/httpRoutes.js"
import type { AgentAuth } from "../auth/AgentKeyAuth.js"
import type { RouteDef } from "../Router.js"
import { atomicLaunchRoutes } from "./AtomicLaunchRoutes.js"
import { selfLaunchRoutes } from "./SelfLaunchRoutes.js"

const settings = { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: null }
const principal = {
  _tag: "agent",
  accountId: "acc_bodies",
  account: { referredBy: null },
  plan: {},
  key: { id: "key_bodies", prefix: "ak_bodies", environment: "production", embeddedWallet: "allowed", dailyLaunchCap: 5, spendLimits: [], txLimit: null }
} as unknown as AgentPrincipal

/** Calls each `[path, body]` on the mounted routes; what the service received, by method. */
const serve = async (
  routes: (seen: Array<[string, unknown]>) => ReadonlyArray<RouteDef>,
  requests: ReadonlyArray<readonly [string, unknown]>,
  headers: Record<string, string> = {}
): Promise<{ answers: ReadonlyArray<{ status: number; body: any }>; seen: ReadonlyArray<[string, unknown]> }> => {
  const seen: Array<[string, unknown]> = []
  const answers = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* mountRoutes(routes(seen))
        return yield* Effect.forEach(requests, ([path, body]) =>
          Effect.promise(async () => {
            const res = await fetch(`${url}${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) })
            return { status: res.status, body: await res.json() }
          })
        )
      })
    )
  )
  return { answers, seen }
}

const testPrincipal = { ...principal, key: { ...principal.key, environment: "test" } } as unknown as AgentPrincipal
/** `x-api-key: test` authenticates a test key (general rule 7), anything else a production key. */
const agentAuth: AgentAuth = {
  authenticate: (headers) => Effect.succeed(headers["x-api-key"] === "test" ? testPrincipal : principal),
  verify: () => Effect.die("not used by the launch routes")
}
/** Records the call and answers a fixed body: these tests are about what reaches the service. */
const recorded =
  (seen: Array<[string, unknown]>, name: string, answer: unknown) =>
  (_caller: unknown, body: unknown): Effect.Effect<any, never> =>
    Effect.sync(() => {
      seen.push([name, body])
      return answer
    })

const selfRoutes = (seen: Array<[string, unknown]>) =>
  selfLaunchRoutes({
    enabled: true,
    agentAuth,
    settings,
    launches: {
      build: recorded(seen, "build", { _tag: "Built", body: { built: true } }),
      dryRun: recorded(seen, "dryRun", { dryRun: true }),
      confirm: recorded(seen, "confirm", { confirmed: true }),
      job: () => Effect.die("not used")
    } as SelfLaunchShape
  })

const atomicRoutes = (seen: Array<[string, unknown]>) =>
  atomicLaunchRoutes({
    enabled: true,
    agentAuth,
    settings,
    launches: {
      build: recorded(seen, "build", { _tag: "Built", body: { built: true } }),
      submit: recorded(seen, "submit", { landed: true, body: { submitted: true } }),
      bundle: () => Effect.die("not used"),
      job: () => Effect.die("not used"),
      recoverPass: Effect.die("not used")
    } as unknown as AtomicLaunchShape
  })

const base58 = getBase58Decoder()
const SIGNATURE = base58.decode(new Uint8Array(64).fill(7))
/** 88 base58 characters: the length of a signature, but 65 bytes. */
const NOT_A_SIGNATURE = "z".repeat(88)
const HASH = `0x${"ab".repeat(32)}`
const CONFIRM = "/api/v1/launch/self/confirm"

const refusal = (a: { status: number; body: any }) => [a.status, a.body.error?.code, a.body.error?.field]

describe("/launch/self/confirm decodes its body by its Schema", () => {
  it("a signature of 88 base58 characters that is not 64 bytes is 400 VALIDATION_FAILED naming signature; the service is not reached", async () => {
    const { answers, seen } = await serve(selfRoutes, [[CONFIRM, { clientLaunchId: "l1", signature: NOT_A_SIGNATURE }]])
    expect(refusal(answers[0]!)).toEqual([400, "VALIDATION_FAILED", "signature"])
    expect(seen).toEqual([])
  })

  it("names the first bad field of the Hood confirm: feeTxHash, devBuySignature, operationId, signedTransaction", async () => {
    const rows: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ signature: "0x1234" }, "signature"],
      [{ signature: HASH, feeTxHash: NOT_A_SIGNATURE }, "feeTxHash"],
      [{ signature: HASH, feeTxHash: `${HASH}00` }, "feeTxHash"],
      [{ signature: HASH, feeTxHash: HASH, devBuySignature: "0x" }, "devBuySignature"],
      [{ signature: HASH, feeTxHash: 7, devBuySignature: "0x" }, "feeTxHash"],
      [{ operationId: "" }, "operationId"],
      [{ operationId: "op_1", signedTransaction: "not hex" }, "signedTransaction"],
      [{ operationId: "op_1", signedTransaction: "0xabc" }, "signedTransaction"],
      [{ feeTxHash: HASH }, "signature"],
      [{ clientLaunchId: "", signature: SIGNATURE }, "clientLaunchId"],
      [{ clientLaunchId: "x".repeat(129), signature: SIGNATURE }, "clientLaunchId"]
    ]
    const { answers, seen } = await serve(
      selfRoutes,
      rows.map(([body]) => [CONFIRM, { clientLaunchId: "l1", ...body }] as const)
    )
    expect(answers.map(refusal)).toEqual(rows.map(([, field]) => [400, "VALIDATION_FAILED", field]))
    expect(seen).toEqual([])
  })

  it("a well-formed Solana or Hood confirm reaches the service once, nulls read as absent and unknown members dropped", async () => {
    const { answers, seen } = await serve(selfRoutes, [
      [CONFIRM, { clientLaunchId: "l1", signature: SIGNATURE, feeTxHash: null, extra: 1 }],
      [CONFIRM, { clientLaunchId: "l2", signature: HASH, feeTxHash: HASH, devBuySignature: HASH.toUpperCase().replace("0X", "0x") }],
      [CONFIRM, { clientLaunchId: "l3", operationId: "op_1", signedTransaction: "0xabcd" }]
    ])
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    expect(seen).toEqual([
      ["confirm", { clientLaunchId: "l1", signature: SIGNATURE }],
      ["confirm", { clientLaunchId: "l2", signature: HASH, feeTxHash: HASH, devBuySignature: HASH.toUpperCase().replace("0X", "0x") }],
      ["confirm", { clientLaunchId: "l3", operationId: "op_1", signedTransaction: "0xabcd" }]
    ])
  })
})

describe("/launch/atomic/submit decodes its body by its Schema", () => {
  const SUBMIT = "/api/v1/launch/atomic/submit"
  const LEG = Buffer.from(new Uint8Array(200).fill(1)).toString("base64")
  it("a leg that is not base64 is 400 VALIDATION_FAILED naming signedTxsBase64[i] before the bundle is consumed", async () => {
    const rows: ReadonlyArray<readonly [unknown, string]> = [
      [{ bundleId: "bnd_1", signedTxsBase64: [LEG, "not base64!"] }, "signedTxsBase64[1]"],
      [{ bundleId: "bnd_1", signedTxsBase64: [LEG, ""] }, "signedTxsBase64[1]"],
      [{ bundleId: "bnd_1", signedTxsBase64: ["A".repeat(1_648)] }, "signedTxsBase64[0]"],
      [{ bundleId: "bnd_1", signedTxsBase64: [LEG, LEG, LEG, LEG, LEG, LEG] }, "signedTxsBase64"],
      [{ bundleId: "bnd_1", signedTxsBase64: LEG }, "signedTxsBase64"],
      [{ bundleId: "", signedTxsBase64: [LEG] }, "bundleId"],
      [{ signedTxsBase64: [LEG] }, "bundleId"],
      [[LEG], "body"]
    ]
    const { answers, seen } = await serve(
      atomicRoutes,
      rows.map(([body]) => [SUBMIT, body] as const)
    )
    expect(answers.map(refusal)).toEqual(rows.map(([, field]) => [400, "VALIDATION_FAILED", field]))
    expect(seen).toEqual([])
  })

  it("well-formed legs reach the service once, as sent (an empty list is the service's count check)", async () => {
    const { answers, seen } = await serve(atomicRoutes, [
      [SUBMIT, { bundleId: "bnd_1", signedTxsBase64: [LEG, LEG] }],
      [SUBMIT, { bundleId: "bnd_2", signedTxsBase64: [] }]
    ])
    expect(answers.map((a) => a.status)).toEqual([200, 200])
    expect(seen).toEqual([
      ["submit", { bundleId: "bnd_1", signedTxsBase64: [LEG, LEG] }],
      ["submit", { bundleId: "bnd_2", signedTxsBase64: [] }]
    ])
  })
})

describe("the launch build routes decode their body once, with the caller's key", () => {
  const launch = { clientLaunchId: "l1", name: "Name", symbol: "SYM", imageUrl: "https://images.example.com/a.png" }
  const self = { ...launch, linkedWalletId: "w_1" }
  const atomic = { ...launch, payer: { type: "main" }, firstBuys: [{ payer: { type: "main" }, amountRaw: "1000" }] }

  it("a test key's production launch is refused naming visibility before the service (general rule 7)", async () => {
    const selfAnswers = await serve(selfRoutes, [["/api/v1/launch/self/build", self], ["/api/v1/launch/self/dry-run", self]], { "x-api-key": "test" })
    const atomicAnswers = await serve(atomicRoutes, [["/api/v1/launch/atomic/build", atomic]], { "x-api-key": "test" })
    expect([...selfAnswers.answers, ...atomicAnswers.answers].map(refusal)).toEqual([
      [400, "VALIDATION_FAILED", "visibility"],
      [400, "VALIDATION_FAILED", "visibility"],
      [400, "VALIDATION_FAILED", "visibility"]
    ])
    expect([...selfAnswers.seen, ...atomicAnswers.seen]).toEqual([])
  })

  it("names the first refusal of the atomic build as the decoder does: firstBuys[i].amountRaw", async () => {
    const { answers, seen } = await serve(atomicRoutes, [
      ["/api/v1/launch/atomic/build", { ...atomic, firstBuys: [{ payer: { type: "main" }, amountRaw: "1000" }, { payer: { type: "main" }, amountRaw: "01" }] }],
      ["/api/v1/launch/atomic/build", { ...atomic, firstBuys: [{ payer: { type: "main" }, amountRaw: String(Number.MAX_SAFE_INTEGER + 1) }] }]
    ])
    expect(answers.map(refusal)).toEqual([
      [400, "VALIDATION_FAILED", "firstBuys[1].amountRaw"],
      [400, "VALIDATION_FAILED", "firstBuys[0].amountRaw"]
    ])
    expect(seen).toEqual([])
  })

  it("a body that decodes reaches the service as the decoded request (amounts in bigint raw units)", async () => {
    const selfAnswers = await serve(selfRoutes, [["/api/v1/launch/self/build", self]])
    const atomicAnswers = await serve(atomicRoutes, [["/api/v1/launch/atomic/build", atomic]])
    expect([...selfAnswers.answers, ...atomicAnswers.answers].map((a) => a.status)).toEqual([200, 200])
    expect(selfAnswers.seen).toMatchObject([["build", { linkedWalletId: "w_1", request: { clientLaunchId: "l1", chain: "solana", buyAmountRaw: 0n, async: false } }]])
    expect(atomicAnswers.seen).toMatchObject([["build", { payer: { type: "main" }, firstBuys: [{ payer: { type: "main" }, amountRaw: 1000n }], request: { clientLaunchId: "l1" } }]])
  })
})
