/**
 * Staking through the started engine (spec document 2, 2.4, 3.3, 4.2): the chain runs as its own
 * process (the standalone Solana localnet, so the test acts as the pool's authority over RPC); the
 * local account is set to Free and its embedded wallet holds 600,000 platform tokens (below the
 * 1,000,000 held threshold). With the staking switch off a build is 503 and confirm is not stopped;
 * on, a stake from the embedded wallet confirms at once and the tier turns Pro; a replay returns
 * the same operation, a changed body is refused; unstake opens a withdrawal; finish is refused
 * before the wait and accepted once the localnet clock passes it; the seventh write in a minute is 429.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { type Engine, projectRoot, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials } from "../support/launchClient.js"
import { solanaEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { stakingChain } from "../support/stakingChain.js"
import { answered } from "../support/typedReads.js"
import type { MainComponents } from "../../clients/typescript/index.js"

const UNIT = 1_000_000n
const WAIT_SECONDS = 3n

let chain: Standalone<StandaloneSolana>
let engine: Engine
let dataDir: string
let key: string
let wallet: string
let onChain: ReturnType<typeof stakingChain>

const env = (enabled: boolean) => ({
  ...solanaEnv(chain.info),
  SOLANA_STAKED_MINT: STAKED_SVC_MINT_ADDRESS,
  AGENT_TIER_HOLDINGS_TTL_MS: "0",
  ...(enabled ? { AGENT_STAKING_ENABLED: "true" } : {})
})

const agentApi = agentClient(
  () => engine.url,
  () => key
)

type Schemas = MainComponents["schemas"]
/** A build's body without its payer (the embedded wallet's, `main`, is added). */
type AmountFields = Pick<Schemas["StakingStakeBuild"], "clientStakeId" | "amountRaw" | "dryRun">
type FinishFields = Pick<Schemas["StakingFinishBuild"], "clientStakeId" | "withdrawal" | "dryRun">
/** A staking build through the typed client, paid by the embedded wallet (`payer: "main"`). */
const build = async (...[action, body]: ["stake" | "unstake", AmountFields] | ["finish", FinishFields]) =>
  answered(
    action === "finish"
      ? await agentApi().POST("/api/v1/agent/staking/finish/build", { body: { payer: "main", ...body } })
      : action === "stake"
        ? await agentApi().POST("/api/v1/agent/staking/stake/build", { body: { payer: "main", ...body } })
        : await agentApi().POST("/api/v1/agent/staking/unstake/build", { body: { payer: "main", ...body } })
  )
const positionsRead = async () => answered(await agentApi().GET("/api/v1/agent/staking"))

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  onChain = stakingChain(chain.info.rpcUrl)
  await onChain.configurePool({ withdrawalTimelockSeconds: WAIT_SECONDS, maxActiveWithdrawals: 5, paused: false })
  engine = await startEngine({ env: env(false), args: ["--quiet"], readyTimeoutMs: 120_000 })
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
  chain?.stop()
})

describe("staking through the engine", () => {
  it("with the switch off, builds answer 503 with the staking message and confirm is not stopped", async () => {
    const refused = await build("stake", { clientStakeId: "off-1", amountRaw: "1" })
    expect(refused.status).toBe(503)
    expect(refused.body.error.code).toBe("LAUNCH_DISABLED")
    expect(refused.body.error.message).toMatch(/staking is disabled/)
    const confirm = answered(await agentApi().POST("/api/v1/agent/staking/confirm", { body: { clientStakeId: "off-1", signature: "1".repeat(64) } }))
    expect(confirm.status).toBe(404)
    const positions = await positionsRead()
    expect(positions.status).toBe(200)
    wallet = positions.body.wallets.find((w: { payer: string }) => w.payer === "main").address
    expect(positions.body).toMatchObject({ withdrawalTimelockSeconds: Number(WAIT_SECONDS), paused: false, maxActiveWithdrawals: 5 })
  })

  it("a Free account's embedded wallet stakes, turns Pro, unstakes, and finishes only after the wait", async () => {
    // Free, holding 600,000 platform tokens (under the 1,000,000 held threshold), then the switch on.
    expect(await engine.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    const { accountId } = localCredentials(dataDir)
    await promisify(execFile)("npm", ["run", "--silent", "cli", "--", "set-plan", "--account", accountId, "--plan", "free"], {
      cwd: projectRoot,
      env: { ...process.env, CURVESTREAM_DATA_DIR: dataDir },
      timeout: 60_000
    })
    await onChain.fund(wallet, 10_000_000_000n, SVC_MINT_ADDRESS, 600_000n * UNIT)
    engine = await startEngine({ env: env(true), args: ["--quiet"], readyTimeoutMs: 120_000, dataDir })

    const tier = async () => answered(await agentApi().GET("/api/v1/agent/tier")).body
    expect(await tier()).toMatchObject({ tier: "free", stakedCndl: "0", heldCndl: "600000" })

    // Dry run: figures, nothing sent; refusals a dry run finds (they count no write).
    const dry = await build("stake", { clientStakeId: "s1", amountRaw: (500_000n * UNIT).toString(), dryRun: true })
    expect(dry.status).toBe(200)
    expect(dry.body).toMatchObject({ dryRun: true, wallet, action: "stake", amountRaw: (500_000n * UNIT).toString(), withdrawalTimelockSeconds: Number(WAIT_SECONDS) })
    expect(BigInt(dry.body.solRequiredLamports)).toBeGreaterThan(0n)
    expect(await onChain.tokenBalance(wallet, STAKED_SVC_MINT_ADDRESS)).toBe(0n)
    const tooMuch = await build("stake", { clientStakeId: "s-over", amountRaw: (600_001n * UNIT).toString(), dryRun: true })
    expect([tooMuch.status, tooMuch.body.error.code, tooMuch.body.error.reason]).toEqual([402, "INSUFFICIENT_OWNER_BALANCE", undefined])
    const noReceipt = await build("unstake", { clientStakeId: "u-over", amountRaw: "1", dryRun: true })
    expect([noReceipt.status, noReceipt.body.error.code]).toEqual([402, "INSUFFICIENT_OWNER_BALANCE"])
    const badAmount = await build("stake", { clientStakeId: "s-bad", amountRaw: "01" })
    expect([badAmount.status, badAmount.body.error.field]).toEqual([400, "amountRaw"])

    // Write 1: the stake, signed and sent at once.
    const staked = await build("stake", { clientStakeId: "s1", amountRaw: (500_000n * UNIT).toString() })
    expect(staked.status).toBe(200)
    expect(staked.body).toMatchObject({ clientStakeId: "s1", wallet, payer: "main", action: "stake", status: "confirmed", replay: false })
    expect(await onChain.tokenBalance(wallet, STAKED_SVC_MINT_ADDRESS)).toBe(500_000n * UNIT)
    expect(await onChain.tokenBalance(wallet, SVC_MINT_ADDRESS)).toBe(100_000n * UNIT)
    // Write 2: a replay answers the same operation; write 3: a changed body is refused.
    const replay = await build("stake", { clientStakeId: "s1", amountRaw: (500_000n * UNIT).toString() })
    expect(replay.body).toMatchObject({ status: "confirmed", signature: staked.body.signature, replay: true })
    const changed = await build("stake", { clientStakeId: "s1", amountRaw: "1" })
    expect([changed.status, changed.body.error.code]).toEqual([409, "IDEMPOTENCY_CONFLICT"])
    expect(await onChain.tokenBalance(wallet, STAKED_SVC_MINT_ADDRESS)).toBe(500_000n * UNIT)

    expect(await tier()).toMatchObject({ tier: "pro", stakedCndl: "500000", heldCndl: "100000" })
    const positions = (await positionsRead()).body
    expect(positions.wallets[0]).toMatchObject({ payer: "main", address: wallet, amountRaw: (500_000n * UNIT).toString(), pendingWithdrawalRaw: "0" })

    // Write 4: unstake opens a withdrawal; the tier drops (pending units count for nothing).
    const unstaked = await build("unstake", { clientStakeId: "u1", amountRaw: (100_000n * UNIT).toString() })
    expect(unstaked.body).toMatchObject({ status: "confirmed", action: "unstake" })
    const withdrawal = unstaked.body.withdrawal as string
    expect(withdrawal).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    const after = (await positionsRead()).body.wallets[0]
    expect(after).toMatchObject({ amountRaw: (400_000n * UNIT).toString(), pendingWithdrawalRaw: (100_000n * UNIT).toString() })
    expect(after.activeWithdrawals).toEqual([expect.objectContaining({ withdrawal, amountRaw: (100_000n * UNIT).toString(), claimTime: null })])
    expect(await tier()).toMatchObject({ tier: "free", stakedCndl: "400000" })

    // Write 5: finish before the wait is refused (409) and pays nothing.
    const early = await build("finish", { clientStakeId: "f1", withdrawal })
    if (early.status === 409) expect(early.body.error.field).toBe("withdrawal")
    else throw new Error(`finish before the wait answered ${early.status}: ${JSON.stringify(early.body)}`)
    expect(await onChain.tokenBalance(wallet, SVC_MINT_ADDRESS)).toBe(100_000n * UNIT)
    // The localnet clock passes the wait (dry runs count no write), then write 6 finishes.
    await eventually(async () => ((await build("finish", { clientStakeId: "f2", withdrawal, dryRun: true })).status === 200 ? true : undefined), {
      what: "the withdrawal's wait to pass on the localnet clock",
      deadlineMs: 20_000,
      intervalMs: 200
    })
    const finished = await build("finish", { clientStakeId: "f2", withdrawal })
    expect(finished.body).toMatchObject({ status: "confirmed", action: "finish", withdrawal, amountRaw: (100_000n * UNIT).toString() })
    expect(await onChain.tokenBalance(wallet, SVC_MINT_ADDRESS)).toBe(200_000n * UNIT)
    const done = (await positionsRead()).body.wallets[0]
    expect(done.finishedWithdrawals).toEqual([expect.objectContaining({ withdrawal, claimable: false })])
    expect(done.pendingWithdrawalRaw).toBe("0")

    // Write 7 in the same minute: 429 with its wait (6 staking writes a minute per account).
    const limited = await build("stake", { clientStakeId: "s7", amountRaw: "1" })
    expect([limited.status, limited.body.error.code]).toEqual([429, "RATE_LIMITED"])
    // A paused pool: the dry run says so (409).
    await onChain.configurePool({ withdrawalTimelockSeconds: WAIT_SECONDS, maxActiveWithdrawals: 5, paused: true })
    const paused = await build("stake", { clientStakeId: "s8", amountRaw: "1", dryRun: true })
    expect([paused.status, paused.body.error.code]).toEqual([409, "VALIDATION_FAILED"])
    await onChain.configurePool({ withdrawalTimelockSeconds: WAIT_SECONDS, maxActiveWithdrawals: 5, paused: false })
  }, 240_000)
})
