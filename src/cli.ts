/**
 * Operator command: `npm run cli -- <command> [options]`. Works on the same database the engine
 * uses (`DATABASE_URL`, or the embedded PGlite under `CURVESTREAM_DATA_DIR`; the embedded
 * database admits one process at a time, so stop the engine first or use a server). Prints
 * one JSON object on stdout; exits 1 with a message on stderr for a bad command.
 *
 *   create-account [--plan free|pro|max] [--plan-until <ISO date>] [--name <text>] [--admin]
 *                  [--agent-disabled] [--session-days <n>]
 *       Creates an account, turns agent features on (unless --agent-disabled) and issues a
 *       session token. --admin makes an operator admin (may call POST /api/v1/admin/agent-tier).
 *   issue-session --account <id> [--days <n> | --no-expiry] [--label <text>]
 *   grant-max --account <id> (--days <n> | --until <ISO date>) [--source team|promo|trial|subscription]
 *   end-max --account <id>
 *   set-plan --account <id> --plan free|pro|max [--until <ISO date>]
 *   enable-agent --account <id>
 *   publish-agent --account <id> --name <text> --wallet <address> [--chain solana|hood]
 *   unpublish-agent --account <id>
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import * as path from "node:path"
import { unsupportedNode } from "./config/Runtime.js"
import * as Database from "./db/Database.js"
import accountsMigration from "./db/migrations/0003_accounts.js"
import { migrations } from "./db/migrations/index.js"
import { PlanIds, type PlanId } from "./domain/Plans.js"
import { applyAgentTier, createAccount, issueSession, MaxSources, setPlan } from "./services/accounts/Accounts.js"
import { findAccount, setAgentEnabled } from "./services/accounts/AccountRepository.js"
import type { MaxSource } from "./services/accounts/Tier.js"
import { publishProfile, unpublishProfile } from "./services/agents/AgentProfiles.js"
import { Layer, Redacted } from "effect"
import { parseWalletChain } from "./services/wallets/ChainKeys.js"
import * as MasterKey from "./services/wallets/MasterKey.js"
import { WalletProvider } from "./services/wallets/WalletProvider.js"
import * as WalletProviderLayer from "./services/wallets/WalletProvider.js"

const DAY_MS = 86_400_000

/** `npm run cli -- --help` (also `-h`, `help`, or no command): printed without opening the database. */
export const USAGE = `usage: npm run cli -- <command> [options]

Works on the engine's database (DATABASE_URL, or the embedded one under CURVESTREAM_DATA_DIR;
stop the engine first when it is embedded). Prints one JSON object.

  create-account [--plan free|pro|max] [--plan-until <ISO date>] [--name <text>] [--admin]
                 [--agent-disabled] [--session-days <n>]
  issue-session --account <id> [--days <n> | --no-expiry] [--label <text>]
  grant-max --account <id> (--days <n> | --until <ISO date>) [--source team|promo|trial|subscription]
  end-max --account <id>
  set-plan --account <id> --plan free|pro|max [--until <ISO date>]
  enable-agent --account <id>
  publish-agent --account <id> --name <text> --wallet <address> [--chain solana|hood]
                 publishes the account's agent profile (copy score, cohorts): the wallet whose
                 trades are scored; again to change it (the profile id stays)
  unpublish-agent --account <id>
  delegate --account <id> --chain solana|evm [--revoke]
                 creates the account's embedded wallet on that chain if needed and approves (or
                 revokes) agent access to it; needs WALLET_MASTER_KEY with DATABASE_URL
`

export const isHelp = (argv: ReadonlyArray<string>): boolean => argv.length === 0 || ["--help", "-h", "help"].includes(argv[0]!)

class Usage extends Error {}

const flags = (argv: ReadonlyArray<string>): Map<string, string | true> => {
  const out = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (!a.startsWith("--")) throw new Usage(`unexpected argument '${a}'`)
    const next = argv[i + 1]
    if (next !== undefined && !next.startsWith("--")) {
      out.set(a.slice(2), next)
      i++
    } else out.set(a.slice(2), true)
  }
  return out
}

const str = (f: Map<string, string | true>, name: string): string | undefined => {
  const v = f.get(name)
  if (v === true) throw new Usage(`--${name} needs a value`)
  return v
}
const required = (f: Map<string, string | true>, name: string): string => {
  const v = str(f, name)
  if (v === undefined) throw new Usage(`--${name} is required`)
  return v
}
const positiveInt = (f: Map<string, string | true>, name: string): number | undefined => {
  const v = str(f, name)
  if (v === undefined) return undefined
  if (!/^[1-9]\d{0,4}$/.test(v)) throw new Usage(`--${name} must be a positive integer`)
  return Number(v)
}
const isoDate = (f: Map<string, string | true>, name: string): number | undefined => {
  const v = str(f, name)
  if (v === undefined) return undefined
  const ms = Date.parse(v)
  if (Number.isNaN(ms)) throw new Usage(`--${name} must be an ISO 8601 date or time`)
  return ms
}
const plan = (v: string): PlanId => {
  if (!(PlanIds as ReadonlyArray<string>).includes(v)) throw new Usage(`--plan must be one of ${PlanIds.join(", ")}`)
  return v as PlanId
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export const runCommand = (argv: ReadonlyArray<string>, nowMs: number): Effect.Effect<Record<string, unknown>, unknown, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const [command, ...rest] = argv
    const f = flags(rest)
    const account = (id: string) =>
      Effect.flatMap(findAccount(id), (a) => (a === undefined ? Effect.fail(new Usage(`no account '${id}'`)) : Effect.succeed(a)))
    switch (command) {
      case "create-account": {
        const p = plan(str(f, "plan") ?? "free")
        const a = yield* createAccount(
          { plan: p, planExpiresAtMs: isoDate(f, "plan-until") ?? null, name: str(f, "name"), isAdmin: f.has("admin"), agentEnabled: !f.has("agent-disabled") },
          nowMs
        )
        const days = positiveInt(f, "session-days") ?? 30
        const s = yield* issueSession(a.id, { label: "cli", expiresAtMs: nowMs + days * DAY_MS }, nowMs)
        return { accountId: a.id, plan: a.plan, planExpiresAt: iso(a.planExpiresAtMs), admin: a.isAdmin, agentEnabled: a.agentEnabled, sessionToken: s.sessionToken, sessionExpiresAt: iso(s.expiresAt) }
      }
      case "issue-session": {
        const a = yield* account(required(f, "account"))
        const days = positiveInt(f, "days")
        const expiresAtMs = f.has("no-expiry") ? null : nowMs + (days ?? 30) * DAY_MS
        const s = yield* issueSession(a.id, { label: str(f, "label") ?? "cli", expiresAtMs }, nowMs)
        return { accountId: a.id, sessionToken: s.sessionToken, sessionExpiresAt: iso(s.expiresAt) }
      }
      case "grant-max": {
        const id = required(f, "account")
        const days = positiveInt(f, "days")
        const until = isoDate(f, "until")
        if ((days === undefined) === (until === undefined)) throw new Usage("give exactly one of --days or --until")
        const expiresAtMs = until ?? nowMs + days! * DAY_MS
        if (expiresAtMs <= nowMs) throw new Usage("--until must be in the future")
        const source = str(f, "source") ?? "team"
        if (!(MaxSources as ReadonlyArray<string>).includes(source)) throw new Usage(`--source must be one of ${MaxSources.join(", ")}`)
        const a = yield* applyAgentTier({ accountId: id, tier: "max", expiresAtMs, source: source as MaxSource }, nowMs)
        return { accountId: a.id, maxGrantExpiresAt: iso(a.maxGrantExpiresAtMs), maxGrantSource: a.maxGrantSource }
      }
      case "end-max": {
        const a = yield* applyAgentTier({ accountId: required(f, "account"), tier: "free", expiresAtMs: null, source: "team" }, nowMs)
        return { accountId: a.id, maxGrantExpiresAt: iso(a.maxGrantExpiresAtMs) }
      }
      case "set-plan": {
        const a = yield* account(required(f, "account"))
        const updated = (yield* setPlan(a.id, plan(required(f, "plan")), isoDate(f, "until") ?? null))!
        return { accountId: a.id, plan: updated.plan, planExpiresAt: iso(updated.planExpiresAtMs) }
      }
      case "enable-agent": {
        const a = yield* account(required(f, "account"))
        yield* setAgentEnabled(a.id, true)
        return { accountId: a.id, agentEnabled: true }
      }
      case "publish-agent": {
        const a = yield* account(required(f, "account"))
        const chain = str(f, "chain") ?? "solana"
        if (chain !== "solana" && chain !== "hood") throw new Usage("--chain must be solana or hood")
        const p = yield* publishProfile({ accountId: a.id, name: required(f, "name"), chain, wallet: required(f, "wallet") }, nowMs).pipe(
          Effect.mapError((e) => (typeof e === "string" ? new Usage(e) : e))
        )
        return { accountId: a.id, profileId: p.id, name: p.name, chain: p.chain, wallet: p.wallet, published: p.published, publishedAt: iso(p.publishedAtMs) }
      }
      case "unpublish-agent": {
        const a = yield* account(required(f, "account"))
        if (!(yield* unpublishProfile(a.id, nowMs))) throw new Usage(`account '${a.id}' has no agent profile`)
        return { accountId: a.id, published: false }
      }
      default:
        throw new Usage(
          `unknown command '${command ?? ""}'; expected create-account, issue-session, grant-max, end-max, set-plan, enable-agent, publish-agent, unpublish-agent or delegate`
        )
    }
  }).pipe(Effect.catchAllDefect((d) => Effect.fail(d)))

/**
 * `delegate`: the operator stands in for the owner's approval of agent access to the account's
 * embedded wallet on one chain (the consent screen of a hosted wallet provider). Re-resolved on
 * every use by the signer, so `--revoke` takes effect at the next signature.
 */
export const runDelegate = (argv: ReadonlyArray<string>): Effect.Effect<Record<string, unknown>, unknown, SqlClient.SqlClient | WalletProvider> =>
  Effect.gen(function* () {
    const f = flags(argv.slice(1))
    const id = required(f, "account")
    const chain = parseWalletChain(required(f, "chain"))
    if (chain === undefined) throw new Usage("--chain must be solana or evm")
    if ((yield* findAccount(id)) === undefined) throw new Usage(`no account '${id}'`)
    const provider = yield* WalletProvider
    const wallet = yield* provider.ensureEmbeddedWallet(id, chain)
    const state = f.has("revoke") ? ("revoked" as const) : ("active" as const)
    yield* provider.setDelegation(id, chain, state)
    return { accountId: id, chain, address: wallet.address, delegation: state }
  }).pipe(Effect.catchAllDefect((d) => Effect.fail(d)))

/** The engine's wallet provider over the same master key the engine uses. */
const walletLayer = (url: string | undefined, dataDir: string) => {
  const configured = process.env.WALLET_MASTER_KEY?.trim() || undefined
  if (url !== undefined && configured === undefined) throw new Usage("WALLET_MASTER_KEY must be set with DATABASE_URL (the engine's key)")
  return WalletProviderLayer.layerLocal({}).pipe(
    Layer.provide(MasterKey.layer({ masterKey: configured === undefined ? undefined : Redacted.make(configured), dataDir: url === undefined ? dataDir : undefined }))
  )
}

const main = async () => {
  const unsupported = unsupportedNode(process.version)
  if (unsupported !== undefined) {
    process.stderr.write(`${unsupported}\n`)
    process.exitCode = 1
    return
  }
  if (isHelp(process.argv.slice(2))) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const dataDir = path.resolve(process.env.CURVESTREAM_DATA_DIR ?? "./data")
  const url = process.env.DATABASE_URL?.trim() || undefined
  if (url === undefined) mkdirSync(dataDir, { recursive: true })
  const program = Effect.gen(function* () {
    // Applies 0003 too if this build's migration index does not list it yet (a no-op once it does).
    yield* Database.runMigrations({ ...migrations, "0003_accounts": accountsMigration })
    const argv = process.argv.slice(2)
    const out =
      argv[0] === "delegate"
        ? yield* runDelegate(argv).pipe(Effect.provide(walletLayer(url, dataDir)))
        : yield* runCommand(argv, Date.now())
    // Printed before the database closes (closing flushes the embedded database to disk).
    yield* Effect.sync(() => process.stdout.write(JSON.stringify(out, null, 2) + "\n"))
  }).pipe(Effect.provide(Database.layer({ url, dataDir })))
  try {
    await Effect.runPromise(program)
    process.exit(0)
  } catch (e) {
    const cause = e instanceof Error && "cause" in e && e.cause instanceof Usage ? e.cause : e
    process.stderr.write(`cli: ${cause instanceof Error ? cause.message : String(cause)}\n`)
    process.exit(1)
  }
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) void main()
