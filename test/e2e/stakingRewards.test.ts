/**
 * Staking reward claims through the started engine (spec document 2, 3.4): the chain runs as its
 * own process and the test distributes rewards to the local account's embedded wallet as the
 * pool's distributor. A TEE wallet's stake is built, signed at the sign relay and submitted once;
 * 20 concurrent claims of one reward pay it once (balances read from the
 * chain); the claimed reward answers its saved signature; someone else's reward and an unknown id
 * are refused; and an engine killed with SIGKILL mid-claim pays at most once after its restart.
 * The staking-write limit (6 a minute per account, reward claims and builds alike) is kept in the
 * database and holds across the restarts, so each test first waits for the writes it will make to
 * fit the account's window (this file is the account's only writer and counts what it sends).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { STAKED_SVC_MINT } from "../../src/domain/QuotePairs.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials } from "../support/launchClient.js"
import { solanaEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { stakingChain } from "../support/stakingChain.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"
import { answered } from "../support/typedReads.js"

let chain: Standalone<StandaloneSolana>
let engine: Engine
let dataDir: string | undefined
let key: string
let wallet: string
let onChain: ReturnType<typeof stakingChain>

const start = () =>
  startEngine({
    env: { ...solanaEnv(chain.info), SOLANA_STAKED_MINT: STAKED_SVC_MINT, AGENT_STAKING_ENABLED: "true" },
    args: ["--quiet"],
    readyTimeoutMs: 120_000,
    ...(dataDir !== undefined ? { dataDir } : {})
  })

const agentApi = agentClient(
  () => engine.url,
  () => key
)
/** When this file sent each staking write (a refused one too: counting more only waits longer). */
const writesAtMs: number[] = []
const STAKING_WINDOW_MS = 60_000 + 1_000 // the limit's minute, and a margin for the two clocks' reads
/** A staking write through the typed client, counted. */
const write = async <R extends { readonly response: Response; readonly data?: unknown; readonly error?: unknown }>(send: () => Promise<R>) => {
  writesAtMs.push(Date.now())
  return answered(await send())
}
const stakeBuild = (body: MainComponents["schemas"]["StakingStakeBuild"]) => write(() => agentApi().POST("/api/v1/agent/staking/stake/build", { body }))
const submit = async (body: MainComponents["schemas"]["StakingSubmit"]) => answered(await agentApi().POST("/api/v1/agent/staking/submit", { body }))
const positions = async () => answered(await agentApi().GET("/api/v1/agent/staking"))
const writesInWindow = () => writesAtMs.filter((t) => t > Date.now() - STAKING_WINDOW_MS).length
/** Waits until `n` more staking writes fit the account's window of six a minute. */
const slotsFree = (n: number) =>
  eventually(async () => (writesInWindow() <= 6 - n ? true : undefined), { what: `${n} staking writes to fit the minute`, deadlineMs: STAKING_WINDOW_MS + 5_000, intervalMs: 250 })
const claim = (rewardId: bigint | string) => write(() => agentApi().POST("/api/v1/agent/staking/rewards/{rewardId}/claim", { params: { path: { rewardId: rewardId.toString() } } }))

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  onChain = stakingChain(chain.info.rpcUrl)
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  wallet = (await positions()).body.wallets.find((w: { payer: string }) => w.payer === "main").address
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  chain?.stop()
})

describe("staking reward claims through the engine", () => {
  it("a TEE wallet's stake: build (a staking write), sign at the relay, submit; the build is staked once", async () => {
    const { sessionToken } = localCredentials(engine.dataDir)
    // The owner's routes through the typed client, with the local session.
    const owner = engineClient({ baseUrl: engine.url, session: sessionToken })
    const keys = answered(await owner.GET("/api/v1/agent/keys")).body.keys as Array<{ keyPrefix: string; status: string }>
    const keyPrefix = keys.find((k) => k.status === "active")!.keyPrefix
    const tee = answered(await owner.POST("/api/v1/agent/tee-wallets", { body: { chain: "solana", keyPrefix, label: "stake tee" } }))
    expect(tee.status).toBe(200)
    const teeWallet = tee.body.wallet ?? tee.body
    await onChain.fund(teeWallet.address, 2_000_000_000n, SVC_MINT_ADDRESS, 50n * 1_000_000n)

    const built = await stakeBuild({ payer: "linked", linkedWalletId: teeWallet.id, clientStakeId: "tee-1", amountRaw: "20000000" })
    expect(built.status).toBe(200)
    expect(built.body).toMatchObject({ status: "built", payer: "linked", wallet: teeWallet.address, lastValidBlockHeight: expect.any(String), recentBlockhash: expect.any(String) })
    expect(await onChain.tokenBalance(teeWallet.address, STAKED_SVC_MINT_ADDRESS)).toBe(0n)
    const signed = answered(
      await agentApi().POST("/api/v1/agent/wallets/{id}/sign", { params: { path: { id: teeWallet.id } }, body: { claimId: built.body.claimId, transaction: built.body.transaction } })
    )
    expect(signed.status).toBe(200)
    const submitted = await submit({ clientStakeId: "tee-1", signedTransaction: signed.body.signedTransaction })
    expect(submitted.body).toMatchObject({ status: "confirmed", clientStakeId: "tee-1", action: "stake", replay: false })
    const again = await submit({ clientStakeId: "tee-1", signedTransaction: signed.body.signedTransaction })
    expect(again.body).toMatchObject({ status: "confirmed", signature: submitted.body.signature, replay: true })
    expect(await onChain.tokenBalance(teeWallet.address, STAKED_SVC_MINT_ADDRESS)).toBe(20_000_000n)
    const unknown = await submit({ clientStakeId: "tee-none", signedTransaction: signed.body.signedTransaction })
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "JOB_NOT_FOUND"])
  }, 120_000)

  it("20 concurrent claims of one reward pay it once; the claimed reward answers its signature", async () => {
    const rewardId = await onChain.distributeReward(wallet, USDC_MINT_ADDRESS, 7_000_000n)
    const listed = (await positions()).body.wallets[0].unclaimedRewards
    expect(listed).toEqual([expect.objectContaining({ rewardId: rewardId.toString(), mint: USDC_MINT_ADDRESS, symbol: "USDC", amountRaw: "7000000", claiming: false })])
    const before = await onChain.tokenBalance(wallet, USDC_MINT_ADDRESS)
    const answers = await Promise.all(Array.from({ length: 20 }, () => claim(rewardId)))
    // Five more this minute reach the service (the staking write limit: six, one used by the build above); one attempt pays.
    for (const a of answers) expect([200, 409, 429]).toContain(a.status)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(15)
    for (const a of answers.filter((a) => a.status === 409)) {
      expect(a.body.error.code).toBe("REWARD_CLAIM_PENDING")
    }
    const paid = answers.filter((a) => a.status === 200)
    expect(new Set(paid.map((a) => a.body.signature)).size).toBeLessThanOrEqual(1)
    await eventually(async () => ((await onChain.tokenBalance(wallet, USDC_MINT_ADDRESS)) === before + 7_000_000n ? true : undefined), {
      what: "the reward to be paid",
      deadlineMs: 20_000,
      intervalMs: 100
    })
    expect(await onChain.tokenBalance(wallet, USDC_MINT_ADDRESS)).toBe(before + 7_000_000n)
    const pending = answers.find((a) => a.status === 409)
    if (pending !== undefined) expect(pending.body.error.retryable).toBe(true)
  }, 120_000)

  it.each([
    { name: "right after the request", afterMs: 20 },
    { name: "mid-confirmation", afterMs: 250 }
  ])("killed with SIGKILL $name, the restarted engine pays the reward at most once", async ({ afterMs }) => {
    const rewardId = await onChain.distributeReward(wallet, USDC_MINT_ADDRESS, 3_000_000n)
    const before = await onChain.tokenBalance(wallet, USDC_MINT_ADDRESS)
    await slotsFree(1)
    const inFlight = claim(rewardId).catch(() => undefined)
    await new Promise((r) => setTimeout(r, afterMs))
    await engine.stop("SIGKILL")
    await inFlight
    engine = await start()
    const answer = await eventually(
      async () => {
        if (writesInWindow() > 5) return undefined
        const a = await claim(rewardId)
        if (a.status === 200) return a
        // Still in flight: pending. Recorded but never sent (the kill fell between the two): it
        // settles failed once its blockhash expires, 503 retryable, and the next claim makes one new
        // attempt (docs/decisions.md, staking reward claims).
        const retry = (a.status === 409 && a.body.error.code === "REWARD_CLAIM_PENDING") || (a.status === 503 && a.body.error.code === "STAKING_REWARD_CLAIM_FAILED")
        return retry ? undefined : a
      },
      { what: "the claim to settle after the restart", deadlineMs: 60_000 + STAKING_WINDOW_MS, intervalMs: 2_100 }
    )
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ rewardId: rewardId.toString(), owner: wallet, mint: USDC_MINT_ADDRESS, amountRaw: "3000000" })
    expect(await onChain.tokenBalance(wallet, USDC_MINT_ADDRESS)).toBe(before + 3_000_000n)
    // Claimed: the saved signature again, nothing paid again.
    await slotsFree(1)
    const again = await claim(rewardId)
    expect(again.body.signature).toBe(answer.body.signature)
    expect(await onChain.tokenBalance(wallet, USDC_MINT_ADDRESS)).toBe(before + 3_000_000n)
  }, 300_000)

  it("an unknown id is 404 and someone else's reward is 403", async () => {
    await slotsFree(3)
    expect((await claim("999999")).body.error.code).toBe("STAKING_REWARD_NOT_FOUND")
    expect((await claim("not-an-id")).status).toBe(404)
    const foreign = await onChain.distributeReward("9QpepZdgTPuCFd4JaViymqDprpbwjJqMqRQHR5GWH47b", USDC_MINT_ADDRESS, 1_000_000n)
    const refused = await claim(foreign)
    expect([refused.status, refused.body.error.code]).toEqual([403, "STAKING_REWARD_NOT_OWNED"])
  }, 120_000)

  it("a stake from the embedded wallet killed with SIGKILL mid-flight is settled after the restart, staked once", async () => {
    await onChain.fund(wallet, 2_000_000_000n, SVC_MINT_ADDRESS, 30_000_000n)
    const before = await onChain.tokenBalance(wallet, STAKED_SVC_MINT_ADDRESS)
    const body: MainComponents["schemas"]["StakingStakeBuild"] = { payer: "main", clientStakeId: `crash-${process.pid}`, amountRaw: "30000000" }
    await slotsFree(1)
    const inFlight = stakeBuild(body).catch(() => undefined)
    await new Promise((r) => setTimeout(r, 150))
    await engine.stop("SIGKILL")
    await inFlight
    engine = await start()
    const answer = await eventually(
      async () => {
        if (writesInWindow() > 5) return undefined
        const a = await stakeBuild(body)
        return a.status === 409 && a.body.error.retryable === true ? undefined : a
      },
      { what: "the stake to settle after the restart", deadlineMs: 30_000 + STAKING_WINDOW_MS, intervalMs: 3_000 }
    )
    // Three outcomes, one stake in each: the first run's transaction left and landed (the restart
    // settles it, the replay answers it); the first run wrote nothing (the replay stakes now); or the
    // kill fell between recording the row and sending it: the row settles `failed` once its blockhash
    // expires, never sent, the replay is 409 with that state, and the client stakes under a new id
    // (docs/decisions.md "An embedded operation the engine died with between recording and sending").
    let settled = answer
    if (answer.status === 409) {
      expect(answer.body.error).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId", details: { state: "failed" } })
      expect(await onChain.tokenBalance(wallet, STAKED_SVC_MINT_ADDRESS)).toBe(before)
      await slotsFree(1)
      settled = await stakeBuild({ ...body, clientStakeId: `${body.clientStakeId}-again` })
    }
    expect(settled.status).toBe(200)
    expect(settled.body).toMatchObject({ status: "confirmed", action: "stake" })
    expect(await onChain.tokenBalance(wallet, STAKED_SVC_MINT_ADDRESS)).toBe(before + 30_000_000n)
  }, 300_000)
})
