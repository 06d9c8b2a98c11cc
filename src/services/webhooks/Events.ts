/**
 * The webhook event names of spec section 6, the only names an endpoint may subscribe to and the
 * only names the outbox accepts.
 */
export const WEBHOOK_EVENTS = [
  "launch.confirmed",
  "launch.failed",
  "curve.graduated",
  "migration.completed",
  "migration.delayed",
  "trade.executed",
  "order.triggered",
  "transfer.executed",
  "withdrawal_address.added",
  "withdrawal_address.revoked",
  "linked_wallet.trusted",
  "linked_wallet.untrusted",
  "key.access_widened",
  "key.access_narrowed",
  "tracked_wallet.traded",
  "tracked_wallet.launched"
] as const

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number]

const known: ReadonlySet<string> = new Set(WEBHOOK_EVENTS)

export const isWebhookEvent = (s: unknown): s is WebhookEventName => typeof s === "string" && known.has(s)
