/**
 * What several of the composition root's layers derive from the configuration the same way: the
 * resolved plan table (resolved once, a service of its own), the public URL, the staked receipt's
 * mint, the Solana treasury, and the secrets a PostgreSQL server requires.
 */
import { Context, Effect, Layer } from "effect"
import { TREASURY_ADDRESS } from "../chain/solana/localnet/DevKeys.js"
import { AppConfig, type AppConfigShape } from "../config/AppConfig.js"
import { type Plan, resolvePlans } from "../domain/Plans.js"
import { STAKED_SVC_MINT } from "../domain/QuotePairs.js"

/** The plan table with `PLAN_OVERRIDES` and `PROMO_MAX_DAYS` applied: the accounts, Hood launches and the plan routes read this one. */
export class ResolvedPlans extends Context.Tag("curvestream/ResolvedPlans")<ResolvedPlans, ReadonlyArray<Plan>>() {
  static readonly layer = Layer.effect(ResolvedPlans, Effect.map(AppConfig, (config) => resolvePlans(config.planOverrides, config.promoMaxDays)))
}

/** Where clients reach the engine: `CURVESTREAM_PUBLIC_URL`, else the listen address. */
export const publicUrlOf = (config: AppConfigShape): string =>
  config.publicUrl ?? `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${config.port}`

/** The localnet deploys the staked receipt; against a real cluster only a configured mint counts. */
export const stakedMintOf = (config: AppConfigShape, embedded: boolean): string | undefined =>
  config.accounts.stakedMint ?? (embedded ? STAKED_SVC_MINT : undefined)

/** `SOLANA_TREASURY_ADDRESS`, else the localnet's treasury when the localnet is embedded. */
export const solanaTreasuryOf = (config: AppConfigShape, embedded: boolean): string | undefined =>
  config.launch.solanaTreasury ?? (embedded ? TREASURY_ADDRESS : undefined)

/** A secret that must be configured when the engine uses a PostgreSQL server (replicas share it). */
export const requireServerSecret = (config: AppConfigShape, name: string, value: unknown) =>
  config.databaseUrl !== undefined && value === undefined
    ? Effect.fail(new Error(`${name} must be set when the engine uses a PostgreSQL server (DATABASE_URL)`))
    : Effect.void
