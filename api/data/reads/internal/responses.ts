/**
 * The market-data reads' answers as schemas (spec document 2, section 4.5; issue 32): token market
 * data and safety, OHLCV history, holders, top traders, venues, the trade tape, profile, launch
 * overview, and the wallet reads (stats, activity, token breakdown, portfolio). Amounts are
 * decimal strings in whole units (token or quote decimals, USD); only OHLC prices and percentages
 * are numbers. Each handler writes its body `satisfies` the schema's type, so a member of the
 * wrong type or one the schema does not name fails to compile; the contract check of the
 * integration and end-to-end suites checks the answers themselves.
 */
import { Schema } from "effect"
import { CurveMode } from "../../../../ingest/ChainEvent.js"
import { DecimalString } from "../../../ResponseSchemas.js"

const Dec = DecimalString
const NullDec = Schema.NullOr(DecimalString)
const Iso = Schema.NullOr(Schema.String.annotations({ description: "ISO 8601" }))
const Chain = Schema.Literal("solana", "hood")
const Lifecycle = Schema.Literal("trading", "completed", "migrated", "recovery")
const Side = Schema.Literal("buy", "sell")

export const TokenMarket = Schema.Struct({
  token: Schema.Struct({
    chain: Chain,
    address: Schema.String,
    name: Schema.String,
    symbol: Schema.String,
    image: Schema.NullOr(Schema.String),
    decimals: Schema.Int,
    quote_asset: Schema.NullOr(Schema.String),
    quote_mint: Schema.String,
    lifecycle: Lifecycle,
    venue: Schema.NullOr(Schema.String),
    progress_bps: Schema.Int,
    price: NullDec,
    price_usd: NullDec,
    market_cap: NullDec,
    market_cap_usd: NullDec,
    liquidity: Dec,
    liquidity_usd: NullDec,
    volume_1h: Dec,
    trades_1h: Schema.Int,
    volume_24h: Dec,
    volume_24h_usd: NullDec,
    trades_24h: Schema.Int,
    buys_24h: Schema.Int,
    sells_24h: Schema.Int,
    volume_total: Dec,
    trades_total: Schema.Int,
    created_at: Iso,
    last_trade_at: Iso,
    creator: Schema.String,
    stats_as_of: Iso
  }),
  safety: Schema.Struct({
    launched_here: Schema.Literal(true),
    program_curve: Schema.Literal(true),
    mode: CurveMode,
    buys_open: Schema.Boolean,
    sells_open: Schema.Boolean,
    holders: Schema.Int,
    top10_held_bps: Schema.Int,
    creator_held_bps: Schema.Int,
    creator_bought: Dec,
    creator_sold: Dec,
    flags: Schema.Array(Schema.Literal("creator_holds_over_20pct", "top10_hold_over_50pct", "creator_sold", "market_in_recovery", "graduating_not_tradable"))
  })
}).annotations({ identifier: "DataTokenMarket" })

const CandleFigures = {
  open: Schema.Number,
  high: Schema.Number,
  low: Schema.Number,
  close: Schema.Number,
  volume: Dec,
  volume_usd: NullDec,
  volume_tokens: Dec,
  trades: Schema.Int,
  buys: Schema.Int,
  sells: Schema.Int
}

export const TokenHistory = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  interval: Schema.Literal("1m", "5m", "15m", "1h", "4h", "1D"),
  price_unit: Schema.String,
  from: Iso,
  to: Iso,
  candles: Schema.Array(Schema.Struct({ t: Iso, ...CandleFigures })),
  summary: Schema.NullOr(Schema.Struct({ ...CandleFigures, change: Schema.Number, change_pct: Schema.NullOr(Schema.Number) }))
}).annotations({ identifier: "DataTokenHistory" })

/** A wallet's position on a token (`positionRow`). */
export const PositionRow = Schema.Struct({
  wallet: Schema.String,
  bought: Dec,
  sold: Dec,
  net: Dec,
  held: Dec,
  held_bps: Schema.Int,
  spent: Dec,
  received: Dec,
  value: Dec,
  pnl: Dec,
  spent_usd: NullDec,
  received_usd: NullDec,
  value_usd: NullDec,
  pnl_usd: NullDec,
  buys: Schema.Int,
  sells: Schema.Int,
  first_trade_at: Iso,
  last_trade_at: Iso
}).annotations({ identifier: "DataPositionRow" })

export const TokenTopTraders = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  sort: Schema.Literal("pnl", "volume"),
  traders: Schema.Int,
  rows: Schema.Array(PositionRow)
}).annotations({ identifier: "DataTokenTopTraders" })

export const TokenHolders = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  supply: Dec,
  holders: Schema.Int,
  rows: Schema.Array(Schema.Struct({ wallet: Schema.String, amount: Dec, held_bps: Schema.Int, value: Dec, value_usd: NullDec, is_creator: Schema.Boolean }))
}).annotations({ identifier: "DataTokenHolders" })

export const TokenVenues = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  current: Schema.NullOr(Schema.String),
  venues: Schema.Array(
    Schema.Struct({
      venue: Schema.String,
      active: Schema.Boolean,
      trades: Schema.Int,
      buys: Schema.Int,
      sells: Schema.Int,
      volume: Dec,
      volume_usd: NullDec,
      trades_24h: Schema.Int,
      volume_24h: Dec,
      volume_24h_usd: NullDec,
      first_trade_at: Iso,
      last_trade_at: Iso
    })
  )
}).annotations({ identifier: "DataTokenVenues" })

export const TokenTrades = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  quote_asset: Schema.NullOr(Schema.String),
  trades: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      signature: Schema.String,
      at: Iso,
      side: Side,
      venue: Schema.String,
      trader: Schema.String,
      amount: Dec,
      quote: Dec,
      quote_usd: NullDec
    })
  )
}).annotations({ identifier: "DataTokenTrades" })

export const TokenProfile = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  name: Schema.String,
  symbol: Schema.String,
  image: Schema.NullOr(Schema.String),
  uri: Schema.String,
  socials: Schema.NullOr(
    Schema.Struct({
      twitter: Schema.optional(Schema.String),
      telegram: Schema.optional(Schema.String),
      website: Schema.optional(Schema.String),
      discord: Schema.optional(Schema.String)
    })
  ).annotations({ description: "The links of the launch's metadata document; null when it gave none or the token was not launched with one" }),
  description: Schema.NullOr(Schema.String).annotations({ description: "The launch's description, from its metadata document" }),
  decimals: Schema.Int,
  supply: Dec,
  quote_asset: Schema.NullOr(Schema.String),
  mode: CurveMode,
  fee_bps: Schema.Int,
  creator_fee_bps: Schema.Int,
  staker_allocation_bps: Schema.Int,
  curve_address: Schema.String,
  created_at: Iso,
  created_signature: Schema.String,
  creator: Schema.Struct({
    address: Schema.String,
    launches: Schema.Int,
    other_launches: Schema.Array(Schema.Struct({ chain: Chain, address: Schema.String, symbol: Schema.String, lifecycle: Lifecycle }))
  })
}).annotations({ identifier: "DataTokenProfile" })

export const TokenLaunchOverview = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  name: Schema.String,
  symbol: Schema.String,
  created_at: Iso,
  creator: Schema.String,
  lifecycle: Lifecycle,
  progress_bps: Schema.Int,
  first_trade_at: Iso,
  last_trade_at: Iso,
  trades: Schema.Int,
  buys: Schema.Int,
  sells: Schema.Int,
  traders: Schema.Int,
  holders: Schema.Int,
  early_buyers: Schema.Int,
  early_window_seconds: Schema.Int,
  volume: Dec,
  volume_usd: NullDec,
  raised: Dec,
  raised_usd: NullDec,
  threshold: Dec,
  dev_buy: Schema.Struct({ bought: Dec, sold: Dec, spent: Dec, spent_usd: NullDec }),
  top10_held_bps: Schema.Int,
  graduated_at: Iso,
  seconds_to_graduation: Schema.NullOr(Schema.Int),
  migrated_at: Iso,
  cached_at: Iso
}).annotations({ identifier: "DataTokenLaunchOverview" })

// ---------------------------------------------------------------------------------------------
// Wallet reads

const Period = Schema.String.annotations({ description: "1d, 7d, 30d, 90d or all" })
const WalletLabel = Schema.NullOr(
  Schema.Struct({ id: Schema.String, label: Schema.String, kind: Schema.Literal("smartmoney", "kol", "deployer", "fund"), groups: Schema.Array(Schema.String) })
)
const ByQuote = Schema.Array(Schema.Struct({ quote_asset: Schema.String, amount: Dec, usd: NullDec }))

export const WalletStats = Schema.Struct({
  chain: Schema.Literal("solana"),
  address: Schema.String,
  period: Period,
  since: Iso,
  label: WalletLabel,
  trades: Schema.Int,
  buys: Schema.Int,
  sells: Schema.Int,
  tokens_traded: Schema.Int,
  volume_usd: NullDec,
  volume: ByQuote,
  realized_pnl_usd: NullDec,
  realized_pnl: ByQuote,
  tokens_closed: Schema.Int,
  wins: Schema.Int,
  losses: Schema.Int,
  win_rate_bps: Schema.NullOr(Schema.Int),
  unknown_tokens: Schema.Int,
  history_truncated: Schema.Boolean
}).annotations({ identifier: "DataWalletStats" })

export const WalletTradeRow = Schema.Struct({
  signature: Schema.String,
  at: Iso,
  token: Schema.String,
  symbol: Schema.NullOr(Schema.String),
  side: Side,
  venue: Schema.String,
  quote_asset: Schema.NullOr(Schema.String),
  amount: NullDec,
  quote: NullDec,
  quote_usd: NullDec,
  volume: NullDec,
  volume_usd: NullDec
}).annotations({ identifier: "DataWalletTrade" })

export const WalletActivity = Schema.Struct({
  chain: Schema.Literal("solana"),
  address: Schema.String,
  period: Period,
  label: WalletLabel,
  trades: Schema.Array(WalletTradeRow),
  next_before: Iso
}).annotations({ identifier: "DataWalletActivity" })

export const WalletTokenBreakdown = Schema.Struct({
  chain: Schema.Literal("solana"),
  address: Schema.String,
  period: Period,
  tokens_traded: Schema.Int,
  history_truncated: Schema.Boolean,
  tokens: Schema.Array(
    Schema.Struct({
      token: Schema.String,
      symbol: Schema.NullOr(Schema.String),
      name: Schema.NullOr(Schema.String),
      quote_asset: Schema.NullOr(Schema.String),
      trades: Schema.Int,
      buys: Schema.Int,
      sells: Schema.Int,
      bought: NullDec,
      sold: NullDec,
      spent: NullDec,
      received: NullDec,
      volume: NullDec,
      volume_usd: NullDec,
      realized_pnl: NullDec,
      realized_pnl_usd: NullDec,
      held: NullDec,
      cost_held: NullDec,
      value: NullDec,
      value_usd: NullDec,
      unrealized_pnl: NullDec,
      unrealized_pnl_usd: NullDec,
      first_trade_at: Iso,
      last_trade_at: Iso
    })
  )
}).annotations({ identifier: "DataWalletTokenBreakdown" })

export const WalletPortfolio = Schema.Struct({
  chain: Schema.Literal("solana"),
  address: Schema.String,
  positions_count: Schema.Int,
  value_usd: NullDec,
  value: ByQuote,
  cost_usd: NullDec,
  history_truncated: Schema.Boolean,
  positions: Schema.Array(
    Schema.Struct({
      token: Schema.String,
      symbol: Schema.NullOr(Schema.String),
      name: Schema.NullOr(Schema.String),
      lifecycle: Schema.NullOr(Lifecycle),
      quote_asset: Schema.NullOr(Schema.String),
      amount: NullDec,
      price: NullDec,
      price_usd: NullDec,
      value: NullDec,
      value_usd: NullDec,
      cost: NullDec,
      cost_usd: NullDec,
      unrealized_pnl: NullDec,
      unrealized_pnl_usd: NullDec
    })
  )
}).annotations({ identifier: "DataWalletPortfolio" })

// ---------------------------------------------------------------------------------------------
// Lists and lookups

export const CohortOverlap = Schema.Struct({
  chain: Chain,
  basis: Schema.Literal("holders", "traders"),
  cohorts: Schema.Array(Schema.Struct({ address: Schema.String, wallets: Schema.Int })),
  pairs: Schema.Array(Schema.Struct({ a: Schema.String, b: Schema.String, shared: Schema.Int, overlap_bps: Schema.Int })),
  in_all: Schema.Int,
  in_two_or_more: Schema.Int,
  truncated: Schema.Boolean,
  wallets: Schema.Array(Schema.Struct({ wallet: Schema.String, mints: Schema.Array(Schema.String) }))
}).annotations({ identifier: "DataCohortOverlap" })

export const PriceRow = Schema.Struct({
  address: Schema.String,
  symbol: Schema.String,
  quote_asset: Schema.NullOr(Schema.String),
  price: NullDec,
  price_usd: NullDec,
  market_cap: NullDec,
  lifecycle: Lifecycle,
  last_trade_at: Iso
})
export const Prices = Schema.Struct({ chain: Chain, prices: Schema.Array(PriceRow), missing: Schema.Array(Schema.String) }).annotations({ identifier: "DataPrices" })

export const TokenSearch = Schema.Struct({
  chain: Chain,
  q: Schema.String,
  matched: Schema.Int,
  results: Schema.Array(
    Schema.Struct({
      address: Schema.String,
      name: Schema.String,
      symbol: Schema.String,
      image: Schema.NullOr(Schema.String),
      match: Schema.String,
      lifecycle: Lifecycle,
      price: NullDec,
      price_usd: NullDec,
      market_cap: NullDec,
      volume_24h: Dec,
      created_at: Iso
    })
  )
}).annotations({ identifier: "DataTokenSearch" })

export const TokenWalletPnl = Schema.Struct({
  chain: Chain,
  address: Schema.String,
  price: NullDec,
  price_usd: NullDec,
  wallets: Schema.Array(
    Schema.Union(
      Schema.Struct({ wallet: Schema.String, traded: Schema.Literal(false) }),
      Schema.Struct({
        traded: Schema.Literal(true),
        ...PositionRow.fields,
        realized_pnl: Dec,
        realized_pnl_usd: NullDec,
        unrealized_pnl: Dec,
        unrealized_pnl_usd: NullDec
      })
    )
  )
}).annotations({ identifier: "DataTokenWalletPnl" })

const StretchRow = {
  address: Schema.String,
  name: Schema.String,
  symbol: Schema.String,
  lifecycle: Lifecycle,
  progress_bps: Schema.Int,
  raised: Dec,
  threshold: Dec,
  remaining: Dec,
  remaining_usd: NullDec,
  price: NullDec,
  price_usd: NullDec,
  market_cap: NullDec,
  volume_1h: Dec
}
export const FinalStretch = Schema.Struct({
  chain: Schema.Literal("solana"),
  as_of: Iso,
  curve: Schema.Array(Schema.Struct(StretchRow)),
  graduated: Schema.Array(Schema.Struct({ ...StretchRow, graduated_at: Iso }))
}).annotations({ identifier: "DataFinalStretch" })

export const Gainers = Schema.Struct({
  chain: Schema.Literal("solana"),
  window: Schema.Literal("5m", "1h", "6h", "24h"),
  gainers: Schema.Array(
    Schema.Struct({
      address: Schema.String,
      name: Schema.String,
      symbol: Schema.String,
      change_pct: Schema.Number,
      price: NullDec,
      price_usd: NullDec,
      market_cap: NullDec,
      volume: Dec,
      volume_usd: NullDec,
      trades: Schema.Int,
      lifecycle: Lifecycle
    })
  )
}).annotations({ identifier: "DataGainers" })

export const MarketActivity = Schema.Struct({
  chain: Chain,
  hours: Schema.Int,
  wallets: Schema.Literal("all", "tracked"),
  tokens: Schema.Array(
    Schema.Struct({
      address: Schema.String,
      name: Schema.NullOr(Schema.String),
      symbol: Schema.NullOr(Schema.String),
      wallets: Schema.Int,
      trades: Schema.Int,
      buys: Schema.Int,
      sells: Schema.Int,
      volume: NullDec,
      volume_usd: NullDec,
      last_trade_at: Iso
    })
  )
}).annotations({ identifier: "DataMarketActivity" })

export const Metas = Schema.Struct({
  chain: Chain,
  hours: Schema.Int,
  metas: Schema.Array(
    Schema.Struct({
      meta: Schema.String,
      tokens: Schema.Int,
      volume_usd: Dec,
      top: Schema.Array(Schema.Struct({ address: Schema.String, symbol: Schema.String, name: Schema.String }))
    })
  )
}).annotations({ identifier: "DataMetas" })

// ---------------------------------------------------------------------------------------------
// The wallet directory

const Visibility = Schema.Literal("public", "pro", "max")
const PlanId = Schema.Literal("free", "pro", "max")
const TrackedWalletFields = {
  id: Schema.String,
  chain: Chain,
  address: Schema.String,
  label: Schema.String,
  kind: Schema.Literal("smartmoney", "kol", "deployer", "fund"),
  visibility: Visibility,
  groups: Schema.Array(Schema.String)
}
const TrackedWalletRow = Schema.Struct({
  ...TrackedWalletFields,
  kol: Schema.NullOr(Schema.Struct({ id: Schema.String, handle: Schema.NullOr(Schema.String) }))
}).annotations({ identifier: "DataTrackedWallet" })
const GroupFields = {
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  visibility: Visibility,
  wallet_ids: Schema.Array(Schema.String),
  wallets: Schema.Int
}

export const Wallets = Schema.Struct({ chain: Chain, plan: PlanId, total: Schema.Int, wallets: Schema.Array(TrackedWalletRow) }).annotations({ identifier: "DataWallets" })
export const WalletDetail = Schema.Struct({
  ...TrackedWalletFields,
  kol: Schema.NullOr(Schema.Struct({ id: Schema.String, handle: Schema.String, name: Schema.String, followers: Schema.Int })),
  group_details: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, visibility: Visibility }))
}).annotations({ identifier: "DataWalletDetail" })
export const Groups = Schema.Struct({ plan: PlanId, groups: Schema.Array(Schema.Struct(GroupFields)) }).annotations({ identifier: "DataGroups" })
export const GroupDetail = Schema.Struct({ ...GroupFields, members: Schema.Array(TrackedWalletRow) }).annotations({ identifier: "DataGroupDetail" })

export const LabelledTrades = Schema.Struct({
  chain: Schema.Literal("solana"),
  kind: Schema.Literal("smartmoney", "kol", "all"),
  wallets: Schema.Int,
  trades: Schema.Array(
    Schema.Struct({
      ...WalletTradeRow.fields,
      wallet: Schema.Struct({
        address: Schema.String,
        id: Schema.String,
        label: Schema.String,
        kind: Schema.Literal("smartmoney", "kol", "deployer", "fund"),
        kol: Schema.NullOr(Schema.String)
      })
    })
  )
}).annotations({ identifier: "DataLabelledTrades" })

export const BookLegs = Schema.Struct({
  chain: Schema.Literal("solana"),
  address: Schema.String,
  days: Schema.Int,
  window_minutes: Schema.Int,
  label: WalletLabel,
  pairs: Schema.Int,
  truncated: Schema.Boolean,
  counterparties: Schema.Array(
    Schema.Struct({ wallet: Schema.String, label: WalletLabel, legs: Schema.Int, tokens: Schema.Int, volume_usd: NullDec, volume: ByQuote })
  ),
  legs: Schema.Array(
    Schema.Struct({
      token: Schema.String,
      symbol: Schema.NullOr(Schema.String),
      gap_ms: Schema.Int,
      leg: WalletTradeRow,
      counter: Schema.Struct({ ...WalletTradeRow.fields, wallet: Schema.String })
    })
  )
}).annotations({ identifier: "DataBookLegs" })

export const AssetRow = Schema.Struct({
  id: Schema.String,
  chain: Chain,
  symbol: Schema.String,
  address: Schema.String,
  decimals: Schema.Int,
  native: Schema.Boolean,
  price_usd: NullDec,
  price_as_of: Iso,
  price_source: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DataAsset" })
export const Assets = Schema.Struct({ assets: Schema.Array(AssetRow) }).annotations({ identifier: "DataAssets" })

// ---------------------------------------------------------------------------------------------
// Social

const MentionRowFields = {
  id: Schema.String,
  chain: Chain,
  token: Schema.String,
  symbol: Schema.NullOr(Schema.String),
  author: Schema.String,
  kol: Schema.NullOr(Schema.Struct({ id: Schema.String, handle: Schema.String, name: Schema.String, followers: Schema.Int })),
  text: Schema.String,
  url: Schema.NullOr(Schema.String),
  at: Iso
}
export const SocialMentions = Schema.Struct({ chain: Chain, mentions: Schema.Array(Schema.Struct(MentionRowFields)) }).annotations({ identifier: "DataSocialMentions" })
export const SocialMentionMarks = Schema.Struct({
  chain: Chain,
  token: Schema.String,
  symbol: Schema.String,
  quote_asset: Schema.NullOr(Schema.String),
  marks: Schema.Array(Schema.Struct({ ...MentionRowFields, price: NullDec, price_usd: NullDec, price_at: Iso }))
}).annotations({ identifier: "DataSocialMentionMarks" })
export const SocialTrending = Schema.Struct({
  chain: Chain,
  window: Schema.Literal("1h", "6h", "24h", "7d"),
  since: Iso,
  mentions_scanned: Schema.Int,
  tokens: Schema.Array(
    Schema.Struct({
      token: Schema.String,
      symbol: Schema.NullOr(Schema.String),
      name: Schema.NullOr(Schema.String),
      mentions: Schema.Int,
      kol_mentions: Schema.Int,
      authors: Schema.Int,
      last_mention_at: Iso,
      trades: Schema.Int,
      traders: Schema.Int,
      volume: NullDec,
      volume_usd: NullDec
    })
  )
}).annotations({ identifier: "DataSocialTrending" })

// ---------------------------------------------------------------------------------------------
// Signals and the personal routes (`/v1/me/...`)

/** A detected signal (`src/domain/Signal.ts`), as the tape, the stream and `/v1/me/signals` write it. */
export const SignalView = Schema.Struct({
  id: Schema.String,
  pattern: Schema.Literal("confluence", "deployer", "large_move", "dormancy", "intra_book", "new_ticker", "distribution", "kol_mention"),
  chain: Chain,
  asset: Schema.String,
  symbol: Schema.NullOr(Schema.String),
  direction: Schema.Literal("in", "out"),
  wallets: Schema.Array(Schema.String),
  wallet_ids: Schema.Array(Schema.String),
  groups: Schema.Array(Schema.String),
  size_usd: NullDec,
  mcap_usd: NullDec,
  age_minutes: Schema.NullOr(Schema.Int),
  venue: Schema.NullOr(Schema.Literal("svc-curve", "dex", "hood-dex")),
  confidence: Schema.Number,
  quality: Schema.Literal("high", "medium", "low"),
  at: Schema.String,
  at_ms: Schema.Int,
  position: Schema.String,
  details: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String)) })
}).annotations({ identifier: "Signal" })

const Deleted = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({ identifier: "PersonalDeleted" })
export { Deleted as PersonalDeleted }
export const Follow = Schema.Struct({ id: Schema.String, chain: Chain, address: Schema.String, created_at: Schema.String }).annotations({ identifier: "PersonalFollow" })
export const Follows = Schema.Struct({ follows: Schema.Array(Follow), quota: Schema.Int, used: Schema.Int }).annotations({ identifier: "PersonalFollows" })
export const Rule = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  pattern: SignalView.fields.pattern,
  wallet_id: Schema.NullOr(Schema.String),
  params: Schema.Struct({
    min_usd: Schema.optionalWith(Schema.String, { exact: true }),
    wallets: Schema.optionalWith(Schema.Int, { exact: true }),
    window_minutes: Schema.optionalWith(Schema.Int, { exact: true }),
    days: Schema.optionalWith(Schema.Int, { exact: true })
  }),
  created_at: Schema.String
}).annotations({ identifier: "PersonalRule" })
export const Rules = Schema.Struct({ rules: Schema.Array(Rule), quota: Schema.Int, used: Schema.Int }).annotations({ identifier: "PersonalRules" })
export const OwnGroup = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  visibility: Schema.Literal("private"),
  wallets: Schema.Array(Schema.Struct({ chain: Chain, address: Schema.String, added_at: Schema.String })),
  created_at: Schema.String
}).annotations({ identifier: "PersonalGroup" })
export const OwnGroups = Schema.Struct({ groups: Schema.Array(OwnGroup), quota: Schema.Int, used: Schema.Int, wallets_per_group: Schema.Int }).annotations({
  identifier: "PersonalGroups"
})
export const Watch = Schema.Struct({ id: Schema.String, chain: Chain, address: Schema.String, label: Schema.NullOr(Schema.String), created_at: Schema.String }).annotations({
  identifier: "PersonalWatch"
})
export const Watchlist = Schema.Struct({ watchlist: Schema.Array(Watch), quota: Schema.Int, used: Schema.Int }).annotations({ identifier: "PersonalWatchlist" })
export const PersonalSignals = Schema.Struct({
  signals: Schema.Array(
    Schema.Struct({
      ...SignalView.fields,
      cursor: Schema.String,
      matched: Schema.Array(Schema.Struct({ kind: Schema.Literal("follow", "rule", "group"), id: Schema.String }))
    })
  ),
  next_after: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PersonalSignals" })

/** `GET /v1/signals`: a page of the tape, or with `group_by=token` one entry per token. */
export const TapePage = Schema.Struct({ signals: Schema.Array(SignalView), next_after: Schema.NullOr(Schema.String) }).annotations({ identifier: "SignalTapePage" })
export const TapeByToken = Schema.Struct({
  tokens: Schema.Array(
    Schema.Struct({
      chain: Schema.String,
      asset: Schema.String,
      symbol: Schema.NullOr(Schema.String),
      signal_count: Schema.Int,
      patterns: Schema.Array(Schema.String),
      first_at: Schema.String,
      last_at: Schema.String,
      max_confidence: Schema.Number,
      latest: SignalView
    })
  )
}).annotations({ identifier: "SignalTapeByToken" })
