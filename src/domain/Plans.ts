/**
 * The plan table (spec document 2, section 2.2): Free, Pro and Max with their price, fees, limits
 * and capability gates. The defaults are the spec's; an operator overrides any field through
 * `PLAN_OVERRIDES` (a JSON object validated against `PlanOverrides`, unknown keys refused), and
 * the served table always includes the overrides. Other modules read limits from here, never
 * from literals.
 */
import { Either, ParseResult, Schema } from "effect"

export const PlanIds = ["free", "pro", "max"] as const
export type PlanId = (typeof PlanIds)[number]

export const PlanLimits = Schema.Struct({
  requestsPerMin: Schema.Int.pipe(Schema.positive()),
  launchesPerDay: Schema.Int.pipe(Schema.nonNegative()),
  uploadsPerMin: Schema.Int.pipe(Schema.nonNegative()),
  linkedWallets: Schema.Int.pipe(Schema.nonNegative())
})

export const PlanCapabilities = Schema.Struct({
  selfSignedLaunch: Schema.Boolean,
  atomicLaunch: Schema.Boolean,
  linkedWallets: Schema.Boolean,
  buyExternalTokens: Schema.Boolean,
  limitOrders: Schema.Boolean,
  deepAnalysis: Schema.Boolean,
  tradeOwnLaunchedTokens: Schema.Boolean,
  tradeBaseAssets: Schema.Boolean,
  sellExternalTokens: Schema.Boolean,
  basePairSwaps: Schema.Boolean,
  ownWalletBridges: Schema.Boolean
})

export const PlanPrice = Schema.Struct({
  /** Monthly price in whole US dollars as a decimal string; "0" for free. */
  usdMonthly: Schema.String.pipe(Schema.pattern(/^\d+(\.\d{1,2})?$/)),
  display: Schema.String,
  payableWithPlatformToken: Schema.Boolean
})

export const Plan = Schema.Struct({
  id: Schema.Literal(...PlanIds),
  name: Schema.String,
  price: PlanPrice,
  /** Agent trade fee in bps. */
  feeBps: Schema.Int.pipe(Schema.between(0, 10_000)),
  /** Perps builder fee in bps; null when the plan pays none. */
  perpFeeBps: Schema.NullOr(Schema.Int.pipe(Schema.between(0, 10_000))),
  limits: PlanLimits,
  capabilities: PlanCapabilities,
  promoMaxDays: Schema.Int.pipe(Schema.nonNegative())
})
export type Plan = typeof Plan.Type

const everyPlan = {
  tradeOwnLaunchedTokens: true,
  tradeBaseAssets: true,
  sellExternalTokens: true,
  basePairSwaps: true,
  ownWalletBridges: true
}

/** The spec's defaults. `promoMaxDays` is filled from configuration. */
export const DefaultPlans: ReadonlyArray<Omit<Plan, "promoMaxDays">> = [
  {
    id: "free",
    name: "Free",
    price: { usdMonthly: "0", display: "free", payableWithPlatformToken: false },
    feeBps: 100,
    perpFeeBps: 10,
    limits: { requestsPerMin: 30, launchesPerDay: 5, uploadsPerMin: 10, linkedWallets: 0 },
    capabilities: {
      selfSignedLaunch: false, atomicLaunch: false, linkedWallets: false, buyExternalTokens: false,
      limitOrders: false, deepAnalysis: false, ...everyPlan
    }
  },
  {
    id: "pro",
    name: "Pro",
    price: { usdMonthly: "50", display: "$50 a month", payableWithPlatformToken: true },
    feeBps: 50,
    perpFeeBps: 10,
    limits: { requestsPerMin: 300, launchesPerDay: 50, uploadsPerMin: 30, linkedWallets: 10 },
    capabilities: {
      selfSignedLaunch: true, atomicLaunch: true, linkedWallets: true, buyExternalTokens: true,
      limitOrders: false, deepAnalysis: false, ...everyPlan
    }
  },
  {
    id: "max",
    name: "Max",
    price: { usdMonthly: "200", display: "$200 a month", payableWithPlatformToken: false },
    feeBps: 25,
    perpFeeBps: null,
    limits: { requestsPerMin: 600, launchesPerDay: 1_000, uploadsPerMin: 60, linkedWallets: 1_000 },
    capabilities: {
      selfSignedLaunch: true, atomicLaunch: true, linkedWallets: true, buyExternalTokens: true,
      limitOrders: true, deepAnalysis: true, ...everyPlan
    }
  }
]

const PlanOverride = Schema.Struct({
  name: Schema.optional(Schema.String),
  price: Schema.optional(Schema.partialWith(PlanPrice, { exact: true })),
  feeBps: Schema.optional(Plan.fields.feeBps),
  perpFeeBps: Schema.optional(Plan.fields.perpFeeBps),
  limits: Schema.optional(Schema.partialWith(PlanLimits, { exact: true })),
  capabilities: Schema.optional(Schema.partialWith(PlanCapabilities, { exact: true }))
})

/** `PLAN_OVERRIDES`: `{ "<plan id>": { <any plan field, nested fields partial> } }`. */
export const PlanOverrides = Schema.partialWith(Schema.Struct({ free: PlanOverride, pro: PlanOverride, max: PlanOverride }), { exact: true })
export type PlanOverrides = typeof PlanOverrides.Type

/** Parses the `PLAN_OVERRIDES` JSON text; the message names the first problem. */
export const parsePlanOverrides = (text: string): Either.Either<PlanOverrides, string> =>
  Schema.decodeUnknownEither(Schema.parseJson(PlanOverrides), { onExcessProperty: "error" })(text).pipe(
    Either.mapLeft((e) => ParseResult.TreeFormatter.formatErrorSync(e))
  )

export const resolvePlans = (overrides: PlanOverrides, promoMaxDays: number): ReadonlyArray<Plan> =>
  DefaultPlans.map((base) => {
    const o = overrides[base.id] ?? {}
    return {
      ...base,
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.feeBps !== undefined ? { feeBps: o.feeBps } : {}),
      ...(o.perpFeeBps !== undefined ? { perpFeeBps: o.perpFeeBps } : {}),
      price: { ...base.price, ...o.price },
      limits: { ...base.limits, ...o.limits },
      capabilities: { ...base.capabilities, ...o.capabilities },
      promoMaxDays
    }
  })

export const planById = (plans: ReadonlyArray<Plan>, id: PlanId): Plan => {
  const plan = plans.find((p) => p.id === id)
  if (plan === undefined) throw new Error(`plan ${id} missing from the table`)
  return plan
}
