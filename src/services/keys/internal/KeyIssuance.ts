/**
 * Key issuance (spec document 2, 2.1): one key per request, the 12-active-key limit held under a
 * lock of the account row, the plaintext only in the answer.
 */
import { Effect } from "effect"
import type { Chain } from "../../../domain/Chain.js"
import { type Account, attributeReferral, lockAccount } from "../../accounts/AccountRepository.js"
import { effectiveCaps, planCaps } from "../KeyRules.js"
import { type KeyError, keyError } from "../KeyError.js"
import * as Repo from "../KeyRepository.js"
import type { OwnerPrincipal } from "../Principals.js"
import { levelOf } from "../Scopes.js"
import { mintToken, newId } from "../Tokens.js"
import { capsView, type IssueOptions, type IssuedKey, type Json, type IssueRequest, type KeyCtx, MAX_ACTIVE_KEYS } from "./KeyParts.js"

export const makeKeyIssuance = (ctx: KeyCtx) => {
  const { options, wallets, store, now, withSql, tx, accountOf, issuanceStorage, planOf } = ctx
  const issueFor = (account: Account, req: IssueRequest, opts: IssueOptions): Effect.Effect<IssuedKey, KeyError> =>
    Effect.gen(function* () {
      const nowMs = yield* now
      const chains: ReadonlyArray<Chain> = yield* wallets.delegatedChains(account.id).pipe(
        Effect.mapError(() => keyError("wallets_unreachable", "The wallet provider could not be reached; nothing was issued", { retryable: true }))
      )
      if (chains.length === 0 && opts.requireDelegation !== false) {
        return yield* Effect.fail(keyError("not_delegated", "Delegate agent access on at least one chain before issuing a key", { retryable: true }))
      }
      const plan = yield* planOf(account, nowMs)
      const caps = planCaps(plan)
      const minted = mintToken(req.environment === "test" ? "test" : "live")
      const row: Repo.NewKey = {
        id: newId("key"),
        prefix: minted.prefix,
        accountId: account.id,
        hash: minted.hash,
        environment: req.environment,
        scopes: req.scopes,
        label: req.label,
        rateLimitPerMin: caps.rateLimitPerMin,
        dailyLaunchCap: caps.dailyLaunchCap,
        launchChains: chains,
        embeddedWallet: req.embeddedWallet,
        expiresAtMs: req.expiresAtMs,
        txLimit: req.txLimit,
        mintedByDeviceId: opts.mintedByDeviceId ?? null,
        provisionedBy: opts.provisionedBy ?? null
      }
      yield* tx(
        Effect.gen(function* () {
          yield* lockAccount(account.id)
          const active = yield* Repo.countActiveKeys(account.id, nowMs)
          if (active >= MAX_ACTIVE_KEYS) {
            return yield* Effect.fail(keyError("active_key_limit", `Active key limit reached (max ${MAX_ACTIVE_KEYS} active keys)`))
          }
          yield* Repo.insertKey(row, nowMs)
        })
      )
      store.invalidate(minted.prefix)
      if (req.ref !== null) {
        const ref = req.ref
        yield* withSql(attributeReferral(account.id, ref, nowMs)).pipe(Effect.catchAll(() => Effect.succeed(false)))
      }
      const key = (yield* withSql(Repo.findKeyByPrefix(minted.prefix)))!
      const eff = effectiveCaps(caps, plan)
      const response: Json = {
        key: minted.token,
        keyPrefix: minted.prefix,
        scopes: req.scopes,
        access: levelOf(req.scopes),
        environment: req.environment,
        rateLimitPerMin: eff.effective.rateLimitPerMin,
        dailyLaunchCap: eff.effective.dailyLaunchCap,
        launchChains: chains,
        embeddedWallet: req.embeddedWallet,
        issuedCaps: capsView(caps),
        effectiveCaps: capsView(eff.effective),
        raisedBy: eff.raisedBy,
        checkedAt: nowMs,
        ...(req.label !== null ? { label: req.label } : {}),
        ...(req.expiresAtMs !== null ? { expiresAt: req.expiresAtMs } : {}),
        ...(req.txLimit !== null ? { txLimit: req.txLimit } : {}),
        ...(options.apiBaseUrl !== undefined ? { apiBaseUrl: options.apiBaseUrl } : {})
      }
      return { response, key }
    }).pipe(issuanceStorage)

  const issue = (owner: OwnerPrincipal, req: IssueRequest) =>
    Effect.gen(function* () {
      const account = yield* accountOf(owner.accountId)
      if (!account.agentEnabled) {
        return yield* Effect.fail(keyError("agent_features_off", "Agent features are off for this account; enable them first"))
      }
      const issued = yield* issueFor(account, req, { mintedByDeviceId: owner._tag === "device" ? owner.deviceId : null })
      return issued.response
    }).pipe(issuanceStorage)
  return { issueFor, issue }
}
