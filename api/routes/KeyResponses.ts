/**
 * The key, tier, device and account routes' answers as schemas (spec document 2, sections 2.1,
 * 2.2, 4.1; issue 32), each the envelope `{success: true, ...view}` over what `KeyService`,
 * `TierService`, `Devices` and the account routes answer. Where the service has a typed view
 * (`TierSnapshot`, the access plan, usage) the type checks below keep the schema and the view the
 * same shape; the rest is checked against the answers themselves by the contract check of the
 * end-to-end suite (`test/support/contract.ts`, `test/e2e/accounts.test.ts`).
 */
import { Schema } from "effect"
import { Chains } from "../../src/domain/Chain.js"
import { Plan, PlanIds } from "../../src/domain/Plans.js"
import type { TierSnapshot } from "../../src/services/accounts/TierService.js"
import type { AccessPlan } from "../../src/services/keys/AccessChange.js"
import type { DailyUsage, KeyUsage, SpendLimit, TxLimit } from "../../src/services/keys/KeyRules.js"
import { SpendAssets, TxLimitResets } from "../../src/services/keys/KeyRules.js"
import { AccessLevels } from "../../src/services/keys/Scopes.js"
import { RawAmount, Success } from "../ResponseSchemas.js"

const Environment = Schema.Literal("production", "test")
const Access = Schema.NullOr(Schema.Literal(...AccessLevels))
const PlanId = Schema.Literal(...PlanIds)
const Chain = Schema.Literal(...Chains)
const Ms = Schema.Int.annotations({ description: "Epoch milliseconds" })
const Caps = Schema.Struct({ rateLimitPerMin: Schema.Int, dailyLaunchCap: Schema.Int })
const TxLimitView = Schema.Struct({ usdMicros: Schema.Int, reset: Schema.Literal(...TxLimitResets) }).annotations({ identifier: "TxLimit" })
const SpendLimitView = Schema.Struct({ asset: Schema.Literal(...SpendAssets), maxPerTxRaw: RawAmount }).annotations({ identifier: "SpendLimit" })
const KeyLimits = Schema.NullOr(Schema.Array(SpendLimitView)).annotations({ description: "Per-asset caps; null: unlimited" })

const Usage = Schema.Struct({
  todayUsdMicros: Schema.Int,
  weekUsdMicros: Schema.Int,
  monthUsdMicros: Schema.Int,
  lifetimeUsdMicros: Schema.Int,
  days30UsdMicros: Schema.Int,
  tradeCount30: Schema.Int,
  launchCount30: Schema.Int,
  lifetimeLaunches: Schema.Int
}).annotations({ identifier: "KeyUsage" })

const DayUsage = Schema.Struct({ day: Schema.String, usdMicros: Schema.Int, tradeCount: Schema.Int, launchCount: Schema.Int })

/** A key row as `keyView` writes it. */
const KeyRow = Schema.Struct({
  keyPrefix: Schema.String,
  label: Schema.optionalWith(Schema.String, { exact: true }),
  scopes: Schema.Array(Schema.String),
  access: Access,
  environment: Environment,
  status: Schema.Literal("active", "revoked", "expired"),
  rateLimitPerMin: Schema.Int,
  dailyLaunchCap: Schema.Int,
  issuedCaps: Caps,
  effectiveCaps: Caps,
  raisedBy: Schema.NullOr(PlanId),
  createdAt: Ms,
  lastUsedAt: Schema.NullOr(Ms),
  revokedAt: Schema.NullOr(Ms),
  expiresAt: Schema.NullOr(Ms),
  launchChains: Schema.Array(Chain),
  mintedByDevicePrefix: Schema.NullOr(Schema.String),
  embeddedWallet: Schema.Literal("allowed", "denied"),
  txLimit: Schema.NullOr(TxLimitView),
  keyLimits: KeyLimits,
  avatar: Schema.optionalWith(Schema.String, { exact: true }),
  paused: Schema.Boolean,
  usage: Schema.optionalWith(Usage, { exact: true })
}).annotations({ identifier: "AgentKeyRow" })

/** The issue answer: the plaintext key, shown only here. */
const IssuedKeyFields = {
  key: Schema.String.annotations({ description: "The plaintext key (svc_live_... or svc_test_...), shown only here" }),
  keyPrefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  access: Access,
  environment: Environment,
  rateLimitPerMin: Schema.Int,
  dailyLaunchCap: Schema.Int,
  launchChains: Schema.Array(Chain),
  embeddedWallet: Schema.Literal("allowed", "denied"),
  issuedCaps: Caps,
  effectiveCaps: Caps,
  raisedBy: Schema.NullOr(PlanId),
  checkedAt: Ms,
  label: Schema.optionalWith(Schema.String, { exact: true }),
  expiresAt: Schema.optionalWith(Ms, { exact: true }),
  txLimit: Schema.optionalWith(TxLimitView, { exact: true }),
  apiBaseUrl: Schema.optionalWith(Schema.String, { exact: true })
}

const AccessSide = Schema.Struct({ access: Access, scopes: Schema.Array(Schema.String) })
const AccessWarning = Schema.Struct({
  code: Schema.Literal(
    "MOVES_FUNDS",
    "VAULT_TRANSFER_READY",
    "LINKED_TRANSFER_NEEDS_LIMITS",
    "BOUND_WALLETS_STOP_TRADING",
    "OPEN_ORDERS_STRANDED",
    "OPEN_SIGNS_REFUSED",
    "WORKERS_STOP",
    "DROPS_UNLISTED_SCOPES"
  ),
  message: Schema.String
})
const AccessEffects = Schema.Struct({
  boundTeeWallets: Schema.optionalWith(Schema.Struct({ count: Schema.Int, sample: Schema.Array(Schema.String) }), { exact: true }),
  walletScope: Schema.optionalWith(Schema.Literal("all", "selected"), { exact: true }),
  linkedTransferReady: Schema.optionalWith(
    Schema.Struct({ txLimit: Schema.Boolean, assets: Schema.Struct({ sol: Schema.Boolean, usdc: Schema.Boolean, svc: Schema.Boolean }) }),
    { exact: true }
  ),
  openSignClaims: Schema.optionalWith(Schema.Int, { exact: true }),
  openLimitOrders: Schema.optionalWith(Schema.Int, { exact: true })
})
const Direction = Schema.Literal("unchanged", "narrow", "widen")
const AccessPlanView = Schema.Struct({
  direction: Direction,
  from: AccessSide,
  to: AccessSide,
  added: Schema.Array(Schema.String),
  removed: Schema.Array(Schema.String),
  effects: AccessEffects,
  warnings: Schema.Array(AccessWarning)
})

const enveloped = <F extends Schema.Struct.Fields>(fields: F, identifier: string) => Schema.Struct({ success: Success, ...fields }).annotations({ identifier })

export const IssuedKey = enveloped(IssuedKeyFields, "IssuedAgentKey")
export const KeyList = enveloped({ keys: Schema.Array(KeyRow), usageSince: Schema.String, checkedAt: Ms }, "AgentKeyList")
export const KeyRevoked = enveloped({ keyPrefix: Schema.String, revokedAt: Schema.NullOr(Ms) }, "AgentKeyRevoked")
export const KeyPatched = enveloped({ key: KeyRow }, "AgentKeyPatched")
export const KeyUsageSeries = enveloped({ keyPrefix: Schema.String, days: Schema.Int, usageSince: Schema.String, series: Schema.Array(DayUsage) }, "AgentKeyUsage")
export const AccessChangeAnswer = Schema.Union(
  enveloped({ keyPrefix: Schema.String, label: Schema.NullOr(Schema.String), ...AccessPlanView.fields, dryRun: Schema.Literal(true) }, "AccessChangePreview"),
  enveloped(
    { keyPrefix: Schema.String, label: Schema.NullOr(Schema.String), ...AccessPlanView.fields, dryRun: Schema.Literal(false), changeId: Schema.String, at: Ms },
    "AccessChangeCommitted"
  )
)
export const AccessChanges = enveloped(
  {
    keyPrefix: Schema.String,
    changes: Schema.Array(
      Schema.Struct({
        changeId: Schema.String,
        at: Ms,
        direction: Direction,
        from: AccessSide,
        to: AccessSide,
        actor: Schema.Literal("session", "device", "agent"),
        actorDevicePrefix: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
        actorKeyPrefix: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
      })
    )
  },
  "AccessChanges"
)
export const OwnKeyLimits = enveloped({ keyLimits: KeyLimits }, "OwnKeyLimits")
export const StoredKeyLimits = enveloped({ keyPrefix: Schema.String, keyLimits: KeyLimits }, "StoredKeyLimits")
export const StoredEmbeddedWallet = enveloped({ keyPrefix: Schema.String, embeddedWallet: Schema.Literal("allowed", "denied") }, "StoredEmbeddedWallet")

const FeeTotal = Schema.Struct({ chain: Schema.String, quoteAsset: Schema.String, feeRawSum: RawAmount, count: Schema.Int })
const TierSnapshotView = Schema.Struct({
  tier: PlanId,
  liveTier: PlanId,
  stakedCndl: Schema.NullOr(RawAmount),
  heldCndl: Schema.NullOr(RawAmount),
  thresholds: Schema.Struct({ minStakedCndl: Schema.Number, minHeldCndl: Schema.Number, graceMs: Schema.Number }),
  grace: Schema.Struct({ active: Schema.Literal(false), startedAt: Schema.Null, endsAt: Schema.Null }),
  maxTierExpiresAt: Schema.NullOr(Ms),
  maxExpired: Schema.Boolean,
  maxExpiredAt: Schema.optionalWith(Ms, { exact: true }),
  maxExpiredSource: Schema.optionalWith(Schema.String, { exact: true }),
  maxExpiredNotice: Schema.optionalWith(Schema.String, { exact: true }),
  renewalUrl: Schema.optionalWith(Schema.String, { exact: true }),
  feeBps: Schema.Int,
  feeTotals: Schema.Array(FeeTotal),
  planTable: Schema.Array(Plan.annotations({ identifier: "Plan" })),
  maxPricing: Schema.Struct({ usdMonthly: Schema.String, display: Schema.String, promoMaxDays: Schema.Int }),
  proPricing: Schema.NullOr(Schema.Struct({ usdMonthly: Schema.String, display: Schema.String, payableWithPlatformToken: Schema.Boolean })),
  tierCaps: Plan.fields.limits,
  checkedAt: Ms
})
export const TierSnapshotAnswer = enveloped(TierSnapshotView.fields, "TierSnapshot")

const MaxSource = Schema.Literal("subscription", "trial", "team", "promo")
export const AgentTierGranted = enveloped(
  {
    accountId: Schema.String,
    plan: PlanId,
    maxGrantExpiresAt: Schema.NullOr(Ms),
    maxGrantSource: Schema.NullOr(MaxSource),
    maxTierExpiresAt: Schema.NullOr(Ms),
    maxExpired: Schema.Boolean
  },
  "AgentTierState"
)
export const AgentEnabled = enveloped({ enabled: Schema.Literal(true) }, "AgentEnabled")

export const DeviceCode = enveloped(
  {
    deviceCode: Schema.String,
    userCode: Schema.String,
    verificationUri: Schema.String,
    verificationUriComplete: Schema.String,
    expiresIn: Schema.Int.annotations({ description: "Seconds" }),
    interval: Schema.Int.annotations({ description: "Seconds between polls" }),
    scopes: Schema.Array(Schema.String),
    movesFunds: Schema.Boolean
  },
  "DeviceCode"
)
const DeviceRequest = Schema.Struct({
  userCode: Schema.String,
  clientName: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Schema.String),
  access: Access,
  movesFunds: Schema.Boolean,
  environment: Environment,
  status: Schema.Literal("pending", "approved", "denied", "exchanged"),
  expiresAt: Ms
})
export const DeviceRequestAnswer = enveloped({ request: DeviceRequest }, "DeviceRequest")
/** The issued key nested in the exchange: exactly the issue answer. */
export const DeviceExchangeAnswer = Schema.Union(
  enveloped(
    { deviceToken: Schema.String, devicePrefix: Schema.String, accountId: Schema.String, scopes: Schema.Array(Schema.String), provisioned: Schema.Literal(true), key: IssuedKey },
    "DeviceTokenProvisioned"
  ),
  enveloped(
    {
      deviceToken: Schema.String,
      devicePrefix: Schema.String,
      accountId: Schema.String,
      scopes: Schema.Array(Schema.String),
      provisioned: Schema.Literal(false),
      code: Schema.String.annotations({ description: "The spec code the failed provisioning maps to" }),
      message: Schema.String
    },
    "DeviceTokenUnprovisioned"
  )
)
export const DeviceList = enveloped(
  {
    devices: Schema.Array(
      Schema.Struct({
        devicePrefix: Schema.String,
        clientName: Schema.NullOr(Schema.String),
        scopes: Schema.Array(Schema.String),
        createdAt: Ms,
        lastUsedAt: Schema.NullOr(Ms),
        revokedAt: Schema.NullOr(Ms)
      })
    )
  },
  "DeviceList"
)
export const DeviceRevoked = enveloped({ devicePrefix: Schema.String, revokedAt: Ms, revokedKeys: Schema.Array(Schema.String) }, "DeviceRevoked")

// The typed views and their schemas: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof TierSnapshotView.Type>, Mutable<TierSnapshot>>>()
same<Same<Mutable<typeof Usage.Type>, Mutable<KeyUsage>>>()
same<Same<Mutable<typeof DayUsage.Type>, Mutable<DailyUsage>>>()
same<Same<Mutable<typeof TxLimitView.Type>, Mutable<TxLimit>>>()
same<Same<keyof typeof SpendLimitView.Type, keyof SpendLimit>>()
same<Same<keyof typeof AccessPlanView.Type, keyof AccessPlan>>()
same<Same<Mutable<typeof AccessEffects.Type>, Mutable<AccessPlan["effects"]>>>()
same<Same<Mutable<typeof AccessWarning.Type>, Mutable<AccessPlan["warnings"][number]>>>()
