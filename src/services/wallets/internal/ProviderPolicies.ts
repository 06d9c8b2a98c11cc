/**
 * The local provider's policies and signer quorums over `wp_policies` and `wp_signer_quorums`:
 * create a backstop policy (the ceilings, active), read a wallet's policy (none or unknown:
 * `default_deny`), set and read its state, register a one-key quorum.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type BackstopRules, type BackstopRulesJson, rulesFromJson, rulesToJson } from "../BackstopPolicy.js"
import type { PolicyState } from "../WalletProvider.js"

/** A provider row's id: `prefix_` and 16 random bytes. */
export const randomId = (prefix: string): string => `${prefix}_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url")}`

export const makeProviderPolicies = (sql: SqlClient.SqlClient, rules: BackstopRules, now: () => Date) => {
  const createBackstopPolicy = Effect.gen(function* () {
    const id = randomId("wpp")
    const t = now()
    yield* sql`INSERT INTO wp_policies (id, rules, state, created_at, updated_at)
      VALUES (${id}, ${JSON.stringify(rulesToJson(rules))}::jsonb, 'active', ${t}, ${t})`
    return id
  })

  /** A wallet's policy from its row (`row` undefined: none or unknown, `default_deny` under the backstop's rules). */
  const policyFrom = (row: { readonly state: PolicyState; readonly rules: string } | undefined) =>
    row === undefined ? { state: "default_deny" as PolicyState, rules } : { state: row.state, rules: rulesFromJson(JSON.parse(row.rules) as BackstopRulesJson) }

  const setPolicyState = (policyId: string, state: PolicyState) =>
    Effect.asVoid(sql`UPDATE wp_policies SET state = ${state}, updated_at = ${now()} WHERE id = ${policyId}`)

  const policyState = (policyId: string) =>
    Effect.map(sql<{ state: PolicyState }>`SELECT state FROM wp_policies WHERE id = ${policyId}`, (rows) => rows[0]?.state)

  const registerSignerQuorum = (signerSpki: Uint8Array) =>
    Effect.gen(function* () {
      const id = randomId("wpq")
      yield* sql`INSERT INTO wp_signer_quorums (id, threshold, public_keys, created_at)
        VALUES (${id}, 1, ${JSON.stringify([Buffer.from(signerSpki).toString("base64")])}::jsonb, ${now()})`
      return id
    })

  return { createBackstopPolicy, policyFrom, setPolicyState, policyState, registerSignerQuorum }
}
