/**
 * Who is calling, once authenticated. Owners (a signed-in session or a device token) manage
 * keys; an agent key acts within its scopes. Built by `api/auth/`, read by the services.
 */
import type { Plan, PlanId } from "../../domain/Plans.js"
import type { Account } from "../accounts/AccountRepository.js"
import type { EffectiveCaps } from "./KeyRules.js"
import type { AgentKey } from "./KeyRepository.js"

export interface SessionPrincipal {
  readonly _tag: "session"
  readonly accountId: string
  readonly sessionId: string
  readonly isAdmin: boolean
}

export interface DevicePrincipal {
  readonly _tag: "device"
  readonly accountId: string
  readonly deviceId: string
  readonly devicePrefix: string
}

export type OwnerPrincipal = SessionPrincipal | DevicePrincipal

export interface AgentPrincipal {
  readonly _tag: "agent"
  readonly accountId: string
  readonly key: AgentKey
  readonly account: Account
  readonly tier: PlanId
  readonly plan: Plan
  readonly caps: EffectiveCaps
}

export type Principal = OwnerPrincipal | AgentPrincipal
