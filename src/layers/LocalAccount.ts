/**
 * Embedded mode's local account (Max, a session token and a Write-level agent key) and its
 * credentials file (`<dataDir>/local-credentials.json`, mode 0600), reused across starts while its
 * credentials still verify; what the `all` role starts beside it (`startLocal`: its funds, simulated
 * rewards and stake, the simulated agents) and the start banner's first launch.
 */
import { Clock, Effect } from "effect"
import * as path from "node:path"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import type { AppConfigShape } from "../config/AppConfig.js"
import { readJsonIfPresent, writeJsonAtomic } from "../platform/Files.js"
import { type LocalCredentials, provisionLocalAccount } from "../services/accounts/LocalAccount.js"
import { seedAgents } from "../services/agents/Seed.js"
import * as WalletProvider from "../services/wallets/WalletProvider.js"
import { fundLocalAccount, localSolanaWallet, stakeLocalAccount } from "../sim/LocalFunding.js"
import { runStakingRewards } from "../sim/StakingRewards.js"

export const LOCAL_CREDENTIALS_FILE = "local-credentials.json"

/** The credentials of the last start, if the file holds them; an unreadable file is logged and ignored. */
const readLocalCredentials = (file: string): Effect.Effect<LocalCredentials | undefined> =>
  Effect.map(readJsonIfPresent(file), (v) => {
    if (typeof v !== "object" || v === null) return undefined
    const { accountId, sessionToken, agentKey } = v as Record<string, unknown>
    return typeof accountId === "string" && typeof sessionToken === "string" && typeof agentKey === "string"
      ? { accountId, sessionToken, agentKey }
      : undefined
  }).pipe(Effect.catchAllDefect((e) => Effect.as(Effect.logWarning(`${file} is unreadable; issuing fresh local credentials`, e), undefined)))

/**
 * The local account, reusing the credentials of the last start while they still verify. Its
 * embedded wallets exist and are delegated on both chains (delegation set once; a later revoke is
 * kept), so the key launches.
 */
export const provisionLocal = (config: AppConfigShape) =>
  Effect.gen(function* () {
    const provider = yield* WalletProvider.WalletProvider
    const file = path.join(config.dataDir, LOCAL_CREDENTIALS_FILE)
    const previous = yield* readLocalCredentials(file)
    const creds = yield* provisionLocalAccount(previous, yield* Clock.currentTimeMillis, (accountId) =>
      Effect.forEach(["solana", "evm"] as const, (chain) =>
        Effect.flatMap(provider.ensureEmbeddedWallet(accountId, chain), (w) =>
          w.delegation === "none" ? provider.setDelegation(accountId, chain, "active") : Effect.void
        )
      )
    )
    // Written to a temporary file and renamed, so a crash never leaves half a file.
    if (creds !== previous) yield* writeJsonAtomic(file, creds, { mode: 0o600, newline: true })
    return creds
  })

/**
 * The `all` role's local start: the local account (embedded mode, or `LOCAL_ACCOUNT=true` beside a
 * server) provisioned and funded from the localnets; unless `quiet`, rewards now and then for its
 * embedded Solana wallet and a stake of its own (so a newcomer sees some to claim, and the simulated
 * Hood graduations pay it Hood staking rewards too), and on embedded localnets the simulated agents.
 * Answers the local account's credentials, if there is one.
 */
export const startLocal = (config: AppConfigShape, quiet: boolean) =>
  Effect.gen(function* () {
    const endpoints = yield* SolanaEndpoints
    const local = (config.localAccount ?? config.databaseUrl === undefined) ? yield* provisionLocal(config) : undefined
    if (local !== undefined) yield* fundLocalAccount(local.accountId)
    const rewardOwner = local === undefined ? undefined : yield* localSolanaWallet(local.accountId).pipe(Effect.orElseSucceed(() => undefined))
    if (endpoints.localFaucet !== undefined && rewardOwner !== undefined && !quiet) {
      yield* Effect.forkScoped(runStakingRewards(endpoints.localFaucet, [rewardOwner]))
      if (local !== undefined) yield* Effect.forkScoped(stakeLocalAccount(local.accountId))
    }
    if (endpoints.embedded && !quiet) {
      const agents = yield* seedAgents(yield* Clock.currentTimeMillis).pipe(Effect.orDie)
      yield* Effect.logInfo(`published ${agents.length} simulated agents: ${agents.map((a) => a.id).join(", ")}`)
    }
    return local
  })

/** The image the first launch uploads: a file every clone has (README "A first launch" uploads the same one, from the checkout's root). */
export const FIRST_LAUNCH_IMAGE = "docs/web-markets.png"

/** The start banner's upload-then-launch pair (README "A first launch"), run from the checkout's root. */
export const firstLaunchBanner = (url: string, enabled: boolean): string =>
  enabled
    ? [
        "first launch (from the checkout's root; agent key in local-credentials.json):",
        `  IMG=$(curl -s -H "x-api-key: $KEY" -H 'content-type: image/png' --data-binary @${FIRST_LAUNCH_IMAGE} ${url}/api/v1/uploads/agent-image | node -p 'JSON.parse(require("fs").readFileSync(0)).imageUrl')`,
        `  curl -s -H "x-api-key: $KEY" -H 'content-type: application/json' ${url}/api/v1/launch/headless -d "{\\"clientLaunchId\\":\\"my-first\\",\\"name\\":\\"First\\",\\"symbol\\":\\"FST\\",\\"imageUrl\\":\\"$IMG\\"}"`
      ].join("\n")
    : "launches are off (the spec's default): restart with HEADLESS_LAUNCH_ENABLED=true to launch; README \"A first launch\" has the curl pair"
