/**
 * Embedded mode's local account (Max, a session token and a Write-level agent key) and its
 * credentials file (`<dataDir>/local-credentials.json`, mode 0600), reused across starts while its
 * credentials still verify.
 */
import { Clock, Effect } from "effect"
import * as path from "node:path"
import type { AppConfigShape } from "../config/AppConfig.js"
import { readJsonIfPresent, writeJsonAtomic } from "../platform/Files.js"
import { type LocalCredentials, provisionLocalAccount } from "../services/accounts/LocalAccount.js"
import * as WalletProvider from "../services/wallets/WalletProvider.js"

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
