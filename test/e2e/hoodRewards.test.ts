/**
 * A graduated Hood token through the started engine (spec document 2, 2.4, 2.5, 4.2, 4.3): the
 * Hood chain runs as its own process with its fault switch, the engine follows it (keeper key
 * included) beside its embedded Solana localnet. The local account stakes platform tokens from its
 * embedded wallet, launches a Hood token through the API, and a trader buys it past graduation;
 * the engine's keeper migrates it into Uniswap v3. Then, read back through the API with the
 * chain's figures:
 * - the fee list's entry carries `lpPosition` (the curve's LP token id, held by the fee splitter
 *   at the position manager the splitter names) and what the splitter owes now;
 * - the graduation's staker allocation (which the chain sent to the staker vault) is the account's
 *   Hood staking reward: the only staker with an EVM wallet, it gets all of it; positions list it
 *   under `unclaimedRewards[]` (a 0x mint, a `hood-` id), and a claim of it is refused 403
 *   `STAKING_REWARD_NOT_OWNED` (made from the site), an unknown Hood id 404;
 * - while the node refuses gas estimates, the fee list and the claim say
 *   `gas_estimate_unavailable` and nothing is sent (the wallet's nonce and the splitter's debt
 *   stand); once estimates return, the claim pays exactly what the chain's balances show.
 */
import { type Address, getAddress, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bondingCurveAbi, feeSplitterAbi, nonfungiblePositionManagerAbi } from "../../src/chain/hood/abi.generated.js"
import { buy as hoodBuy, hoodPublicClient, hoodWallet, readCurve } from "../../src/chain/hood/client/HoodClient.js"
import { devAccount, FIRST_TRADER_INDEX, STAKER_VAULT_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { hoodChain } from "../../src/chain/hood/localnet/Deploy.js"
import { STAKED_SVC_MINT } from "../../src/domain/QuotePairs.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, uploadImage } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"
import { engineClient } from "../../clients/typescript/index.js"
import { hoodEnv, type Standalone, type StandaloneHood, startStandaloneHood } from "../support/standaloneChains.js"

let chain: Standalone<StandaloneHood>
let engine: Engine
let key: string
let pc: ReturnType<typeof hoodPublicClient>
const engineTail = () => engine.output().slice(-4000)

const agentApi = agentClient(
  () => engine.url,
  () => key
)
/** The agent's fee, staking and reward routes through the typed client, as the local key. */
const agent = {
  fees: async () => answered(await agentApi().GET("/api/v1/agent/fees", { params: { query: { limit: 50 } } })),
  claimFees: async (mint: string, body: { dryRun?: boolean }) => answered(await agentApi().POST("/api/v1/agent/fees/{mint}/claim", { params: { path: { mint } }, body })),
  positions: async () => answered(await agentApi().GET("/api/v1/agent/staking")),
  claimReward: async (rewardId: string) => answered(await agentApi().POST("/api/v1/agent/staking/rewards/{rewardId}/claim", { params: { path: { rewardId } } }))
}

const erc20BalanceAbi = [
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "a", type: "address" }], outputs: [{ name: "", type: "uint256" }] }
] as const

beforeAll(async () => {
  chain = await startStandaloneHood({ HOOD_LOCALNET_FAULT_SWITCH: "true", HOOD_LOCALNET_BLOCK_MS: "500" })
  engine = await startEngine({
    env: { ...hoodEnv(chain.info), HEADLESS_LAUNCH_ENABLED: "true", AGENT_STAKING_ENABLED: "true", SOLANA_STAKED_MINT: STAKED_SVC_MINT, MIGRATION_SWEEP_INTERVAL_MS: "1000" },
    args: ["--quiet"],
    readyTimeoutMs: 150_000
  })
  key = localCredentials(engine.dataDir).agentKey
  pc = hoodPublicClient(hoodChain(chain.info.chainId, chain.info.rpcUrl), chain.info.rpcUrl)
}, 240_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
  chain?.stop()
})

/** The localnet node's fault switch (its own JSON-RPC, not the engine's API: a plain fetch). */
const faults = (estimateGas: boolean) =>
  fetch(chain.info.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "localnet_setRpcFaults", params: [{ estimateGas }] })
  }).then((r) => r.json() as Promise<{ result?: { estimateGas: boolean } }>)

const feeEntry = async (token: string) =>
  ((await agent.fees()).body.tokens as Array<Record<string, any>>).find((t) => t.mint.toLowerCase() === token.toLowerCase())

describe("a graduated Hood token through the engine", () => {
  it("lpPosition, the staker allocation as the account's Hood reward (listed, not agent-claimable), and gas_estimate_unavailable", async () => {
    const hoodChainDef = hoodChain(chain.info.chainId, chain.info.rpcUrl)
    const funder = hoodWallet(hoodChainDef, devAccount(FIRST_TRADER_INDEX + 6).account, chain.info.rpcUrl)
    const trader = { publicClient: pc, wallet: hoodWallet(hoodChainDef, devAccount(FIRST_TRADER_INDEX + 7).account, chain.info.rpcUrl) }

    // Stake from the embedded Solana wallet (funded with platform tokens by the embedded mode).
    const stake = answered(await agentApi().POST("/api/v1/agent/staking/stake/build", { body: { payer: "main", clientStakeId: `hood-reward-${process.pid}`, amountRaw: "2000000000" } }))
    expect(stake.status, JSON.stringify(stake.body)).toBe(200)
    expect(stake.body.status).toBe("confirmed")

    // The embedded EVM wallet pays the launch and, later, the claim's gas (a configured node: nothing funds it).
    const { sessionToken } = localCredentials(engine.dataDir)
    const wallets = answered(await engineClient({ baseUrl: engine.url, session: sessionToken }).GET("/api/v1/agent/wallets")).body
    const embeddedEvm = getAddress((wallets.embeddedWallets as Array<{ chain: string; address: string }>).find((w) => w.chain === "evm")!.address)
    await pc.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: embeddedEvm, value: 5n * 10n ** 18n, chain: hoodChainDef, account: funder.account! }) })

    const imageUrl = await uploadImage(engine, key)
    const launched = answered(
      await agentApi().POST("/api/v1/launch/headless", { body: { clientLaunchId: `hood-grad-${process.pid}`, chain: "hood", dexVersion: "v3", name: "Hood Grad", symbol: "HGRAD", imageUrl } })
    )
    expect(launched.status, JSON.stringify(launched.body)).toBe(200)
    const token = getAddress(launched.body.mint as string)
    const curve = getAddress(launched.body.pool as string)

    // Past the threshold in one buy: the keeper migrates the completed curve into Uniswap v3.
    await hoodBuy(trader, curve, { amountInRaw: 10n * 10n ** 18n, quoteToken: zeroAddress })
    await eventually(async () => ((await readCurve(pc, curve)).phase === "migrated" ? true : undefined), {
      what: "the keeper to migrate the curve",
      deadlineMs: 90_000,
      intervalMs: 250,
      detail: engineTail
    })
    const lpTokenId = (await pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "lpTokenId" })) as bigint
    const positionManager = (await pc.readContract({ address: getAddress(chain.info.addresses.feeSplitter), abi: feeSplitterAbi, functionName: "positionManager" })) as Address
    expect(lpTokenId).toBeGreaterThan(0n)
    expect(await pc.readContract({ address: positionManager, abi: nonfungiblePositionManagerAbi, functionName: "ownerOf", args: [lpTokenId] })).toBe(getAddress(chain.info.addresses.feeSplitter))

    // The fee list: lpPosition with the chain's figures, and what the splitter owes now.
    const entry = await eventually(async () => {
      const e = await feeEntry(token)
      return e?.lpPosition !== undefined ? e : undefined
    }, { what: "the graduated token's lpPosition in the fee list", deadlineMs: 20_000, intervalMs: 250 })
    expect(entry.lpPosition).toEqual({ tokenId: lpTokenId.toString(), positionManager })
    const owedWei = (await pc.readContract({ address: getAddress(chain.info.addresses.feeSplitter), abi: feeSplitterAbi, functionName: "streamerOwed", args: [curve, zeroAddress] })) as bigint
    expect(owedWei).toBeGreaterThan(0n)
    expect(entry).toMatchObject({ chain: "hood", symbol: "HGRAD", claimable: true, recipient: embeddedEvm })
    expect(entry.claimableAmounts).toContainEqual({ symbol: "ETH", mint: zeroAddress, decimals: 18, amountRaw: owedWei.toString() })

    // The staker allocation went to the staker vault at migration; it is the account's Hood reward, all of it.
    const allocation = (await pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "stakerAllocation" })) as bigint
    expect(allocation).toBeGreaterThan(0n)
    const vault = devAccount(STAKER_VAULT_INDEX).account.address
    expect(await pc.readContract({ address: token, abi: erc20BalanceAbi, functionName: "balanceOf", args: [vault] })).toBe(allocation)
    const reward = await eventually(async () => {
      const p = await agent.positions()
      const all = (p.body.wallets as Array<{ unclaimedRewards: Array<Record<string, any>> }>).flatMap((w) => w.unclaimedRewards)
      return all.find((r) => typeof r.mint === "string" && r.mint.toLowerCase() === token.toLowerCase())
    }, { what: "the Hood reward in positions", deadlineMs: 30_000, intervalMs: 250, detail: engineTail })
    expect(reward).toMatchObject({ rewardId: expect.stringMatching(/^hood-[1-9][0-9]*$/), symbol: "HGRAD", name: "Hood Grad", amountRaw: allocation.toString(), claiming: false })
    expect(Date.parse(reward.distributedAt)).toBeGreaterThan(0)
    // Listed on the staking wallet, once.
    const listed = (await agent.positions()).body.wallets as Array<{ payer: string; unclaimedRewards: Array<{ rewardId: string }> }>
    expect(listed.flatMap((w) => w.unclaimedRewards).filter((r) => r.rewardId === reward.rewardId)).toHaveLength(1)
    expect(listed.find((w) => w.payer === "main")!.unclaimedRewards.map((r) => r.rewardId)).toContain(reward.rewardId)

    // Read-only for agents: the claim is refused and nothing moves; an unknown Hood id is not found.
    const refused = await agent.claimReward(reward.rewardId)
    expect([refused.status, refused.body.error.code]).toEqual([403, "STAKING_REWARD_NOT_OWNED"])
    const unknown = await agent.claimReward("hood-999999999")
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "STAKING_REWARD_NOT_FOUND"])
    expect(await pc.readContract({ address: token, abi: erc20BalanceAbi, functionName: "balanceOf", args: [vault] })).toBe(allocation)

    // The node refuses gas estimates: the list and the claim say so, and nothing is sent.
    expect((await faults(true)).result).toEqual({ estimateGas: true })
    try {
      const nonceBefore = await pc.getTransactionCount({ address: embeddedEvm })
      const listedFault = await feeEntry(token)
      expect(listedFault).toMatchObject({ claimable: false, reason: "gas_estimate_unavailable", lpPosition: entry.lpPosition })
      const dry = await agent.claimFees(token, { dryRun: true })
      expect(dry.body).toMatchObject({ dryRun: true, claimable: false, reason: "gas_estimate_unavailable", outcome: "not_started" })
      const claim = await agent.claimFees(token, {})
      expect([claim.status, claim.body.error.code, claim.body.error.reason]).toEqual([409, "FEE_NOT_CLAIMABLE", "gas_estimate_unavailable"])
      expect(await pc.getTransactionCount({ address: embeddedEvm, blockTag: "pending" })).toBe(nonceBefore)
      expect(await pc.readContract({ address: getAddress(chain.info.addresses.feeSplitter), abi: feeSplitterAbi, functionName: "streamerOwed", args: [curve, zeroAddress] })).toBe(owedWei)
    } finally {
      await faults(false)
    }

    // Estimates back: the claim pays what the chain owed, to the unit of the wallet's balance change.
    const before = await pc.getBalance({ address: embeddedEvm })
    const claimed = await agent.claimFees(token, {})
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200)
    expect(claimed.body).toMatchObject({ success: true, chain: "hood", outcome: "complete" })
    const eth = (claimed.body.claimed as Array<{ symbol: string; amountRaw: string; txHash: `0x${string}` }>).find((c) => c.symbol === "ETH")!
    const receipt = await pc.getTransactionReceipt({ hash: eth.txHash })
    const after = await pc.getBalance({ address: embeddedEvm, blockNumber: receipt.blockNumber })
    expect(BigInt(eth.amountRaw)).toBe(owedWei)
    expect(after - before + receipt.gasUsed * receipt.effectiveGasPrice).toBe(owedWei)
  }, 300_000)
})
