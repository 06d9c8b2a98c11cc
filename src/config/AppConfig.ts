/**
 * Every setting the engine reads, through effect `Config` (environment variables by default).
 * One place, so README's configuration table and `.env.example` can be checked against it
 * (`test/conformance/config.test.ts`). Secrets use `Config.redacted`.
 */
import { Config, ConfigError, Context, Either, Layer, Redacted } from "effect"
import { availableParallelism } from "node:os"
import * as path from "node:path"
import type { HoodEndpointsConfig } from "../chain/hood/HoodEndpoints.js"
import type { SolanaEndpointsConfig } from "../chain/solana/SolanaEndpoints.js"
import { DefaultDevBuyCeilings, type DevBuyCeilings } from "../domain/Economics.js"
import { parsePlanOverrides, type PlanOverrides } from "../domain/Plans.js"
import { DefaultTierThresholds, type TierThresholds } from "../services/accounts/Tier.js"
import { DEFAULT_CEILING_LAMPORTS, DEFAULT_CEILING_WEI } from "../services/wallets/BackstopPolicy.js"
import { parseProxyTrust, type ProxyTrust } from "../net/ProxyTrust.js"

export type LogFormat = "json" | "pretty" | "logfmt"

export interface AppConfigShape {
  readonly host: string
  readonly port: number
  readonly dataPort: number
  readonly dataDir: string
  /** Unset: embedded PGlite under `<dataDir>/pg`. */
  readonly databaseUrl: Redacted.Redacted<string> | undefined
  /**
   * `LOCAL_ACCOUNT`: provision the local Max account (session, agent key, funded embedded wallets).
   * Unset: on exactly in embedded mode (no `DATABASE_URL`). `true` with a PostgreSQL server is for
   * development and the benches, and needs the embedded localnets (checked at start).
   */
  readonly localAccount: boolean | undefined
  /** Unset: embedded chDB under `<dataDir>/chdb`. */
  readonly clickhouseUrl: string | undefined
  readonly clickhouseDatabase: string
  readonly clickhouseUser: string | undefined
  readonly clickhousePassword: Redacted.Redacted<string> | undefined
  /** Set (`KAFKA_BROKERS`): the bus is Kafka (`ingest/bus/KafkaBus.ts`); unset: the embedded bus. */
  readonly kafka: {
    readonly brokers: ReadonlyArray<string> | undefined
    readonly clientId: string
    readonly idempotent: boolean
    /** A group member silent this long is dropped and its partitions move (`KAFKA_SESSION_TIMEOUT_MS`, default 10 s). */
    readonly sessionTimeoutMs: number
  }
  readonly bus: {
    readonly partitions: number
    readonly segmentBytes: number
    readonly retentionBytesPerPartition: number
    readonly maxPendingBytes: number
    readonly flushIntervalMs: number
    readonly fsync: boolean
  }
  readonly maxBodyBytes: number
  /** `TRUSTED_PROXIES`: addresses and CIDR blocks whose connections carry the client in `X-Forwarded-For`; empty: none. */
  readonly trustedProxies: ProxyTrust
  /** Threads holding the signal stream's sockets on the data port (1: the listener's own). */
  readonly dataStreamThreads: number
  readonly logLevel: "trace" | "debug" | "info" | "warning" | "error" | "none"
  readonly logFormat: LogFormat
  /** The endpoints' settings (`SolanaEndpointsConfig`, declared by the chain layer) and the ingest commitment. */
  readonly solana: SolanaEndpointsConfig & {
    readonly commitment: "processed" | "confirmed" | "finalized"
    /** `BUNDLE_TIP_LAMPORTS`: the block-engine tip an atomic launch's payer pays in the launch transaction. */
    readonly bundleTipLamports: bigint
  }
  /**
   * USD prices (`src/layers/Prices.ts`): `oracle` reads SOL/USD from the Pyth account over Yellowstone
   * and ETH/USD from Hood's AggregatorV3 feed (the other assets from the fixed prices), `fixed`
   * answers `LOCALNET_USD_PRICES` for every asset.
   */
  readonly prices: {
    readonly source: "oracle" | "fixed"
    readonly pythSolUsdAccount: string
    readonly maxAgeMs: number
    readonly maxConfidenceBps: number
  }
  /** The endpoints' settings (`HoodEndpointsConfig`, declared by the chain layer) and the ingester's. */
  readonly hood: HoodEndpointsConfig & {
    readonly fromBlock: bigint
    readonly confirmations: number
    readonly reorgWindowBlocks: number
    readonly backfillBlocks: number
    readonly pollIntervalMs: number
  }
  /**
   * Chains whose derived state may be deleted and rebuilt when their configured node follows
   * another chain than the one recorded (`RESET_CHAIN_STATE=solana,hood`; embedded localnets
   * always rebuild). See `services/chains/ChainIdentity.ts`.
   */
  readonly resetChainState: ReadonlyArray<"solana" | "hood">
  readonly keeper: {
    readonly sweepIntervalMs: number
    readonly maxAttempts: number
  }
  readonly actorShards: number
  readonly marketSnapshotIntervalMs: number
  readonly simulationSeed: number
  readonly devBuyCeilings: DevBuyCeilings
  readonly planOverrides: PlanOverrides
  readonly promoMaxDays: number
  /**
   * Where clients reach this engine from outside (`apiBaseUrl` of an issued key, and the base of
   * the device and renewal URLs below). Unset: the listen address.
   */
  readonly publicUrl: string | undefined
  readonly accounts: {
    readonly tierThresholds: TierThresholds
    /** The staked-receipt mint on Solana; unset while staking is not deployed (staked balance 0). */
    readonly stakedMint: string | undefined
    /** How long an account's platform-token holdings are reused for its tier (at most 5 minutes, the spec's re-check window). */
    readonly holdingsTtlMs: number
    /** `AGENT_STAKING_ENABLED` exactly `true`: the staking write rail (builds, submit, reward claims) is on. */
    readonly stakingEnabled: boolean
    /** Unset: `<public url>/device`. */
    readonly deviceVerificationUri: string | undefined
    /** Unset: `<public url>/pricing`. */
    readonly renewalUrl: string | undefined
  }
  readonly wallets: {
    /** Base64 of 32 bytes. Unset: generated once into `<dataDir>/wallet-master.key` (embedded mode only). */
    readonly masterKey: Redacted.Redacted<string> | undefined
    readonly ceilingLamports: bigint
    readonly ceilingWei: bigint
  }
  readonly webhooks: {
    /** 64 hex digits or base64 of 32 bytes. Unset: generated once into `<dataDir>/webhook-secret.key` (embedded mode only). */
    readonly secretKey: Redacted.Redacted<string> | undefined
    /** Tests only: test accounts may register and receive loopback targets. */
    readonly allowLoopbackForTests: boolean
  }
  readonly launch: {
    /** `HEADLESS_LAUNCH_ENABLED` exactly `true`; anything else answers every launch call LAUNCH_DISABLED (spec rule 5). */
    readonly enabled: boolean
    /** `EXP_CUSTOM_CURVES` exactly `true`: `exp-custom` is accepted (spec 2.1). */
    readonly expCustomCurves: boolean
    /** `TEE_LAUNCH_BUYS_ENABLED` exactly `true`: a TEE wallet's self-signed launch may carry a dev buy (general rule 3). */
    readonly teeLaunchBuys: boolean
    /** Secret the Solana launch mints derive from (>= 32 bytes, hex); embedded mode keeps one in the data directory. */
    readonly mintSecret: Redacted.Redacted<string> | undefined
    /** The svc-curve treasury the platform fee is paid to; defaults to the localnet's. */
    readonly solanaTreasury: string | undefined
    readonly solanaExplorerUrl: string
    readonly hoodExplorerUrl: string | undefined
    /** Holder pass for `exclusive` launches: whole platform-token units held or staked. */
    readonly exclusiveHolderPassSvc: number
    /** Tests only: `imageUrl` / `bannerUrl` may name loopback servers. */
    readonly imageAllowLoopbackForTests: boolean
  }
}

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

const nonNegativeInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a non-negative integer`, validation: (n) => n >= 0 })
  )

const rawAmount = (name: string, fallback: bigint) =>
  Config.string(name).pipe(
    Config.withDefault(fallback.toString()),
    Config.validate({ message: `${name} must be a whole number of raw units`, validation: (s) => /^\d+$/.test(s) }),
    Config.map((s) => BigInt(s))
  )

const optionalString = (name: string) =>
  Config.string(name).pipe(
    Config.option,
    Config.map((o) => (o._tag === "Some" && o.value.trim() !== "" ? o.value.trim() : undefined))
  )

/** An EVM address (0x + 40 hex), or undefined when unset or empty. */
const optionalAddress = (name: string) =>
  optionalString(name).pipe(
    Config.validate({ message: `${name} must be a 0x-prefixed 20-byte hex address`, validation: (s) => s === undefined || /^0x[0-9a-fA-F]{40}$/.test(s) })
  )

const optionalSecret = (name: string) =>
  Config.redacted(name).pipe(
    Config.option,
    Config.map((o) => (o._tag === "Some" && Redacted.value(o.value).trim() !== "" ? o.value : undefined))
  )

const httpUrl = (name: string) =>
  optionalString(name).pipe(
    Config.validate({
      message: `${name} must be an http(s) URL`,
      validation: (s) => {
        if (s === undefined) return true
        try {
          const u = new URL(s)
          return u.protocol === "https:" || u.protocol === "http:"
        } catch {
          return false
        }
      }
    }),
    Config.map((s) => (s === undefined ? undefined : s.replace(/\/+$/, "")))
  )

/** True only for the exact text `true` (the spec's switches: unset or anything else is off). */
const exactlyTrue = (name: string) =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((s) => s === "true")
  )

const planOverrides = Config.string("PLAN_OVERRIDES").pipe(
  Config.withDefault("{}"),
  Config.mapOrFail((text) =>
    Either.mapLeft(parsePlanOverrides(text), (msg) => ConfigError.InvalidData(["PLAN_OVERRIDES"], msg))
  )
)

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  host: Config.string("CURVESTREAM_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("CURVESTREAM_PORT").pipe(Config.withDefault(8080)),
  dataPort: Config.port("CURVESTREAM_DATA_PORT").pipe(Config.withDefault(8081)),
  dataDir: Config.string("CURVESTREAM_DATA_DIR").pipe(Config.withDefault("./data"), Config.map((d) => path.resolve(d))),
  databaseUrl: optionalSecret("DATABASE_URL"),
  localAccount: optionalString("LOCAL_ACCOUNT").pipe(
    Config.mapOrFail((s) =>
      s === undefined || s === "true" || s === "false"
        ? Either.right(s === undefined ? undefined : s === "true")
        : Either.left(ConfigError.InvalidData(["LOCAL_ACCOUNT"], "LOCAL_ACCOUNT must be true or false (or unset: on in embedded mode)"))
    )
  ),
  clickhouseUrl: optionalString("CLICKHOUSE_URL"),
  clickhouseDatabase: Config.string("CLICKHOUSE_DATABASE").pipe(
    Config.withDefault("curvestream"),
    Config.validate({ message: "CLICKHOUSE_DATABASE must be an identifier", validation: (s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) })
  ),
  clickhouseUser: optionalString("CLICKHOUSE_USER"),
  clickhousePassword: optionalSecret("CLICKHOUSE_PASSWORD"),
  kafka: Config.all({
    brokers: optionalString("KAFKA_BROKERS").pipe(
      Config.map((s) => (s === undefined ? undefined : s.split(",").map((b) => b.trim()).filter((b) => b !== ""))),
      Config.validate({
        message: "KAFKA_BROKERS must be a comma-separated list of host:port",
        validation: (bs) => bs === undefined || (bs.length > 0 && bs.every((b) => /^[^\s:,]+:\d{1,5}$/.test(b)))
      })
    ),
    clientId: Config.string("KAFKA_CLIENT_ID").pipe(
      Config.withDefault("curvestream"),
      Config.validate({ message: "KAFKA_CLIENT_ID must be 1-100 of [A-Za-z0-9._-]", validation: (s) => /^[A-Za-z0-9._-]{1,100}$/.test(s) })
    ),
    idempotent: Config.boolean("KAFKA_IDEMPOTENT").pipe(Config.withDefault(true)),
    sessionTimeoutMs: positiveInt("KAFKA_SESSION_TIMEOUT_MS", 10_000)
  }),
  bus: Config.all({
    partitions: positiveInt("BUS_PARTITIONS", 16),
    segmentBytes: positiveInt("BUS_SEGMENT_BYTES", 64 * 1024 * 1024),
    retentionBytesPerPartition: positiveInt("BUS_RETENTION_BYTES", 1024 * 1024 * 1024),
    maxPendingBytes: positiveInt("BUS_MAX_PENDING_BYTES", 16 * 1024 * 1024),
    flushIntervalMs: nonNegativeInt("BUS_FLUSH_INTERVAL_MS", 0),
    fsync: Config.boolean("BUS_FSYNC").pipe(Config.withDefault(true))
  }),
  maxBodyBytes: positiveInt("HTTP_MAX_BODY_BYTES", 256 * 1024),
  trustedProxies: Config.string("TRUSTED_PROXIES").pipe(
    Config.withDefault(""),
    Config.mapOrFail((text) => {
      const parsed = parseProxyTrust(text)
      return "error" in parsed
        ? Either.left(ConfigError.InvalidData(["TRUSTED_PROXIES"], `TRUSTED_PROXIES: ${parsed.error}; expected comma-separated addresses and CIDR blocks`))
        : Either.right(parsed.trust)
    })
  ),
  dataStreamThreads: positiveInt("DATA_STREAM_THREADS", 1),
  logLevel: Config.literal("trace", "debug", "info", "warning", "error", "none")("LOG_LEVEL").pipe(Config.withDefault("info")),
  logFormat: Config.literal("json", "pretty", "logfmt")("LOG_FORMAT").pipe(Config.withDefault("json")),
  solana: Config.all({
    rpcUrl: optionalString("SOLANA_RPC_URL"),
    yellowstoneUrl: optionalString("YELLOWSTONE_URL"),
    yellowstoneToken: optionalSecret("YELLOWSTONE_TOKEN"),
    blockEngineUrl: optionalString("BLOCK_ENGINE_URL"),
    bundleTipLamports: rawAmount("BUNDLE_TIP_LAMPORTS", 100_000n),
    commitment: Config.literal("processed", "confirmed", "finalized")("SOLANA_COMMITMENT").pipe(Config.withDefault("confirmed")),
    localnetSlotMs: positiveInt("LOCALNET_SLOT_MS", 400),
    keeperSecretKey: optionalSecret("KEEPER_SECRET_KEY")
  }),
  hood: Config.all({
    rpcUrl: optionalString("HOOD_RPC_URL"),
    chainId: positiveInt("HOOD_CHAIN_ID", 31337),
    factory: optionalAddress("HOOD_FACTORY_ADDRESS"),
    feeSplitter: optionalAddress("HOOD_FEE_SPLITTER_ADDRESS"),
    uniswapV3Factory: optionalAddress("HOOD_UNISWAP_V3_FACTORY_ADDRESS"),
    weth9: optionalAddress("HOOD_WETH9_ADDRESS"),
    swapRouter: optionalAddress("HOOD_SWAP_ROUTER_ADDRESS"),
    tradeRouter: optionalAddress("HOOD_TRADE_ROUTER_ADDRESS"),
    ethUsdFeed: optionalAddress("HOOD_ETH_USD_FEED_ADDRESS"),
    keeperPrivateKey: optionalSecret("HOOD_KEEPER_PRIVATE_KEY"),
    fromBlock: nonNegativeInt("HOOD_FROM_BLOCK", 0).pipe(Config.map((n) => BigInt(n))),
    confirmations: nonNegativeInt("HOOD_CONFIRMATIONS", 0),
    reorgWindowBlocks: positiveInt("HOOD_REORG_WINDOW_BLOCKS", 64),
    backfillBlocks: positiveInt("HOOD_BACKFILL_BLOCKS", 2000),
    pollIntervalMs: positiveInt("HOOD_POLL_INTERVAL_MS", 250),
    localnetBlockMs: nonNegativeInt("HOOD_LOCALNET_BLOCK_MS", 1000)
  }),
  prices: Config.all({
    source: Config.literal("oracle", "fixed")("PRICE_SOURCE").pipe(Config.withDefault("oracle")),
    pythSolUsdAccount: Config.string("PYTH_SOL_USD_ACCOUNT").pipe(
      Config.withDefault("7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE"),
      Config.validate({ message: "PYTH_SOL_USD_ACCOUNT must be a base58 account address", validation: (s) => /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s) })
    ),
    maxAgeMs: positiveInt("PRICE_MAX_AGE_MS", 60_000),
    maxConfidenceBps: positiveInt("PRICE_MAX_CONFIDENCE_BPS", 200)
  }),
  resetChainState: Config.string("RESET_CHAIN_STATE").pipe(
    Config.withDefault(""),
    Config.map((s) => s.split(",").map((c) => c.trim()).filter((c) => c !== "")),
    Config.validate({
      message: "RESET_CHAIN_STATE must list chains among solana, hood (comma-separated) or be empty",
      validation: (cs) => cs.every((c) => c === "solana" || c === "hood")
    }),
    Config.map((cs) => [...new Set(cs as ReadonlyArray<"solana" | "hood">)])
  ),
  keeper: Config.all({
    sweepIntervalMs: positiveInt("MIGRATION_SWEEP_INTERVAL_MS", 120_000),
    maxAttempts: positiveInt("MIGRATION_MAX_ATTEMPTS", 5)
  }),
  actorShards: Config.string("ACTOR_SHARDS").pipe(
    Config.withDefault(""),
    Config.validate({ message: "ACTOR_SHARDS must be a positive integer or empty", validation: (s) => s.trim() === "" || /^[1-9]\d{0,3}$/.test(s.trim()) }),
    Config.map((s) => (s.trim() === "" ? Math.max(2, 2 * availableParallelism()) : Number(s.trim())))
  ),
  simulationSeed: Config.integer("SIM_SEED").pipe(Config.withDefault(42)),
  marketSnapshotIntervalMs: positiveInt("MARKET_SNAPSHOT_INTERVAL_MS", 60_000),
  devBuyCeilings: Config.all({
    DEV_BUY_MAX_LAMPORTS: rawAmount("DEV_BUY_MAX_LAMPORTS", DefaultDevBuyCeilings.DEV_BUY_MAX_LAMPORTS),
    DEV_BUY_MAX_USDC_RAW: rawAmount("DEV_BUY_MAX_USDC_RAW", DefaultDevBuyCeilings.DEV_BUY_MAX_USDC_RAW),
    DEV_BUY_MAX_CNDL_RAW: rawAmount("DEV_BUY_MAX_CNDL_RAW", DefaultDevBuyCeilings.DEV_BUY_MAX_CNDL_RAW),
    DEV_BUY_MAX_WEI: rawAmount("DEV_BUY_MAX_WEI", DefaultDevBuyCeilings.DEV_BUY_MAX_WEI)
  }),
  planOverrides,
  promoMaxDays: Config.integer("PROMO_MAX_DAYS").pipe(
    Config.withDefault(30),
    Config.validate({ message: "PROMO_MAX_DAYS must be 0 or more", validation: (n) => n >= 0 })
  ),
  publicUrl: httpUrl("CURVESTREAM_PUBLIC_URL"),
  accounts: Config.all({
    tierThresholds: Config.all({
      minStakedCndl: nonNegativeInt("AGENT_TIER_PRO_MIN_STAKED_CNDL", DefaultTierThresholds.minStakedCndl),
      minHeldCndl: nonNegativeInt("AGENT_TIER_PRO_MIN_HELD_CNDL", DefaultTierThresholds.minHeldCndl),
      graceMs: nonNegativeInt("AGENT_TIER_GRACE_MS", DefaultTierThresholds.graceMs)
    }),
    stakedMint: optionalString("SOLANA_STAKED_MINT").pipe(
      Config.validate({
        message: "SOLANA_STAKED_MINT must be a base58 Solana address",
        validation: (s) => s === undefined || /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)
      })
    ),
    holdingsTtlMs: Config.integer("AGENT_TIER_HOLDINGS_TTL_MS").pipe(
      Config.withDefault(60_000),
      Config.validate({ message: "AGENT_TIER_HOLDINGS_TTL_MS must be 0 to 300000", validation: (n) => n >= 0 && n <= 300_000 })
    ),
    stakingEnabled: exactlyTrue("AGENT_STAKING_ENABLED"),
    deviceVerificationUri: httpUrl("DEVICE_VERIFICATION_URI"),
    renewalUrl: httpUrl("RENEWAL_URL")
  }),
  wallets: Config.all({
    masterKey: optionalSecret("WALLET_MASTER_KEY"),
    ceilingLamports: rawAmount("AGENT_WALLET_CEILING_LAMPORTS", DEFAULT_CEILING_LAMPORTS),
    ceilingWei: rawAmount("AGENT_WALLET_CEILING_WEI", DEFAULT_CEILING_WEI)
  }),
  webhooks: Config.all({
    secretKey: optionalSecret("WEBHOOK_SECRET_KEY"),
    allowLoopbackForTests: Config.boolean("WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS").pipe(Config.withDefault(false))
  }),
  launch: Config.all({
    enabled: exactlyTrue("HEADLESS_LAUNCH_ENABLED"),
    expCustomCurves: exactlyTrue("EXP_CUSTOM_CURVES"),
    teeLaunchBuys: exactlyTrue("TEE_LAUNCH_BUYS_ENABLED"),
    mintSecret: optionalSecret("LAUNCH_MINT_SECRET").pipe(
      Config.validate({
        message: "LAUNCH_MINT_SECRET must be at least 64 hex characters (32 bytes)",
        validation: (s) => s === undefined || /^([0-9a-fA-F]{2}){32,}$/.test(Redacted.value(s).trim())
      })
    ),
    solanaTreasury: optionalString("SOLANA_TREASURY_ADDRESS").pipe(
      Config.validate({
        message: "SOLANA_TREASURY_ADDRESS must be a base58 Solana address",
        validation: (s) => s === undefined || /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)
      })
    ),
    solanaExplorerUrl: httpUrl("SOLANA_EXPLORER_URL").pipe(Config.map((s) => s ?? "https://explorer.solana.com")),
    hoodExplorerUrl: httpUrl("HOOD_EXPLORER_URL"),
    exclusiveHolderPassSvc: nonNegativeInt("EXCLUSIVE_HOLDER_PASS_SVC", 100_000),
    imageAllowLoopbackForTests: Config.boolean("IMAGE_ALLOW_LOOPBACK_FOR_TESTS").pipe(Config.withDefault(false))
  })
})

export class AppConfig extends Context.Tag("curvestream/AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(AppConfig, appConfig)
  static readonly layerWith = (config: AppConfigShape) => Layer.succeed(AppConfig, config)
}

/** The environment variables `appConfig` reads; README and `.env.example` must list each. */
export const ConfigVariables = [
  "CURVESTREAM_HOST", "CURVESTREAM_PORT", "CURVESTREAM_DATA_PORT", "CURVESTREAM_DATA_DIR",
  "DATABASE_URL", "CLICKHOUSE_URL", "CLICKHOUSE_DATABASE", "CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD",
  "KAFKA_BROKERS", "KAFKA_CLIENT_ID", "KAFKA_IDEMPOTENT", "KAFKA_SESSION_TIMEOUT_MS",
  "BUS_PARTITIONS", "BUS_SEGMENT_BYTES", "BUS_RETENTION_BYTES", "BUS_MAX_PENDING_BYTES", "BUS_FLUSH_INTERVAL_MS", "BUS_FSYNC",
  "TRUSTED_PROXIES", "HTTP_MAX_BODY_BYTES", "DATA_STREAM_THREADS", "LOG_LEVEL", "LOG_FORMAT",
  "SOLANA_RPC_URL", "YELLOWSTONE_URL", "YELLOWSTONE_TOKEN", "BLOCK_ENGINE_URL", "BUNDLE_TIP_LAMPORTS", "SOLANA_COMMITMENT", "LOCALNET_SLOT_MS",
  "KEEPER_SECRET_KEY",
  "HOOD_RPC_URL", "HOOD_CHAIN_ID", "HOOD_FACTORY_ADDRESS", "HOOD_FEE_SPLITTER_ADDRESS", "HOOD_UNISWAP_V3_FACTORY_ADDRESS", "HOOD_WETH9_ADDRESS",
  "HOOD_SWAP_ROUTER_ADDRESS", "HOOD_TRADE_ROUTER_ADDRESS", "HOOD_ETH_USD_FEED_ADDRESS",
  "HOOD_KEEPER_PRIVATE_KEY", "HOOD_FROM_BLOCK", "HOOD_CONFIRMATIONS", "HOOD_REORG_WINDOW_BLOCKS", "HOOD_BACKFILL_BLOCKS", "HOOD_POLL_INTERVAL_MS",
  "HOOD_LOCALNET_BLOCK_MS", "RESET_CHAIN_STATE", "LOCALNET_USD_PRICES", "PRICE_SOURCE", "PYTH_SOL_USD_ACCOUNT", "PRICE_MAX_AGE_MS",
  "PRICE_MAX_CONFIDENCE_BPS", "MIGRATION_SWEEP_INTERVAL_MS", "MIGRATION_MAX_ATTEMPTS", "ACTOR_SHARDS", "SIM_SEED", "MARKET_SNAPSHOT_INTERVAL_MS",
  "DEV_BUY_MAX_LAMPORTS", "DEV_BUY_MAX_USDC_RAW", "DEV_BUY_MAX_CNDL_RAW", "DEV_BUY_MAX_WEI",
  "PLAN_OVERRIDES", "PROMO_MAX_DAYS",
  "CURVESTREAM_PUBLIC_URL", "AGENT_TIER_PRO_MIN_STAKED_CNDL", "AGENT_TIER_PRO_MIN_HELD_CNDL", "AGENT_TIER_GRACE_MS",
  "SOLANA_STAKED_MINT", "AGENT_TIER_HOLDINGS_TTL_MS", "AGENT_STAKING_ENABLED", "DEVICE_VERIFICATION_URI", "RENEWAL_URL",
  "WALLET_MASTER_KEY", "AGENT_WALLET_CEILING_LAMPORTS", "AGENT_WALLET_CEILING_WEI",
  "WEBHOOK_SECRET_KEY", "WEBHOOK_ALLOW_LOOPBACK_FOR_TESTS",
  "LOCAL_ACCOUNT", "HEADLESS_LAUNCH_ENABLED", "EXP_CUSTOM_CURVES", "TEE_LAUNCH_BUYS_ENABLED", "LAUNCH_MINT_SECRET", "SOLANA_TREASURY_ADDRESS", "SOLANA_EXPLORER_URL", "HOOD_EXPLORER_URL",
  "EXCLUSIVE_HOLDER_PASS_SVC", "IMAGE_ALLOW_LOOPBACK_FOR_TESTS"
] as const
