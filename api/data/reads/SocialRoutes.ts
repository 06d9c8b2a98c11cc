/**
 * Spec 4.5 `GET /v1/social/mentions`, `/v1/social/mention-marks`, `/v1/social/mentions/trending`:
 * recent posts naming tokens (newest first), a token's mentions against its price at each
 * (oldest first), and tokens ranked by mentions then USD volume over a window (`SocialTrending`).
 */
import { Effect } from "effect"
import type { SocialMention } from "../../../actors/signals/KolMention.js"
import { mintVolumes, pricesAt } from "../../../clickhouse/queries/WalletReads.js"
import { apiError } from "../../../src/domain/ApiError.js"
import { formatUnits } from "../../../src/domain/CurveMath.js"
import { rankTrending, tallyMentions, TRENDING_SCAN_MAX } from "../../../src/services/marketdata/SocialTrending.js"
import { usdMicrosOf, usdPerToken } from "../../../src/services/prices/Money.js"
import { json } from "../../Http.js"
import { isApiError, opt, parseAddress, parseChainParam, parseEnumParam, parseTimeParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, DAY_MS, intQ, iso, paramQ, readRoute, queryOf } from "./internal/shared.js"
import {
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  parseIntW,
  parseTokenQ,
  pricesFor,
  quoteFmt,
  tokenInfo,
  usdFmt,
  walletRead as ch,
  type WalletSocialDeps
} from "./internal/wallet.js"

export const MENTION_MARKS_DAYS_DEFAULT = 7
export const MENTION_MARKS_DAYS_MAX = 30
const TRENDING_WINDOWS: Readonly<Record<string, number>> = { "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": DAY_MS, "7d": 7 * DAY_MS }

export const socialRoutes = (deps: WalletSocialDeps): ReadonlyArray<RouteDef> => {
  const isKol = (author: string) => deps.tracking.kolByHandle(author) !== undefined

  const mentionRow = (m: SocialMention) => {
    const kol = deps.tracking.kolByHandle(m.author)
    return {
      id: m.id,
      chain: m.chain,
      token: m.asset,
      symbol: deps.index.market(m.chain, m.asset)?.identity.symbol ?? null,
      author: m.author,
      kol: kol === undefined ? null : { id: kol.id, handle: kol.handle, name: kol.name, followers: kol.followers },
      text: m.text,
      url: m.url,
      at: iso(m.atMs)
    }
  }

  const mentions = readRoute(
    deps,
    {
      path: "/v1/social/mentions",
      operationId: "dataSocialMentions",
      summary: "Recent social posts naming tokens, newest first",
      query: [
        chainQ,
        paramQ("token", "Only this token"),
        paramQ("since", "From this time: ISO 8601 or epoch ms"),
        paramQ("kol", "true: only KOL authors", { type: "boolean" }),
        intQ("limit", "Rows", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
      ]
    },
    (req) =>
      Effect.gen(function* () {
        const qs = queryOf(req)
        const chain = parseChainParam(qs)
        if (isApiError(chain)) return yield* chain
        const token = parseTokenQ(qs, chain)
        if (isApiError(token)) return yield* token
        const since = parseTimeParam(qs, "since")
        if (isApiError(since)) return yield* since
        const kol = parseEnumParam(qs, "kol", ["true", "false"] as const, "false")
        if (isApiError(kol)) return yield* kol
        const limit = parseIntW(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isApiError(limit)) return yield* limit
        const base = { chain, ...(token === undefined ? {} : { asset: token }), ...(since === undefined ? {} : { sinceMs: since }) }
        const found =
          kol === "true"
            ? deps.social
                .recent({ ...base, limit: TRENDING_SCAN_MAX })
                .filter((m) => isKol(m.author))
                .slice(0, limit)
            : deps.social.recent({ ...base, limit })
        return json(200, { chain, mentions: found.map(mentionRow) })
      })
  )

  const mentionMarks = readRoute(
    deps,
    {
      path: "/v1/social/mention-marks",
      operationId: "dataSocialMentionMarks",
      summary: "A token's mentions plotted against its price: each mention with the price in force when it was posted",
      description:
        "Marks are oldest first. The price is the reserves after the token's last trade at or before the mention (quote per whole token, 18 places); null before its first trade.",
      query: [
        chainQ,
        paramQ("token", "The token", { type: "string" }, true),
        intQ("days", "Look back this many days", 1, MENTION_MARKS_DAYS_MAX, MENTION_MARKS_DAYS_DEFAULT),
        intQ("limit", "Marks (newest)", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
      ],
      responses: { 404: { description: "MARKET_NOT_FOUND" } }
    },
    (req) =>
      Effect.gen(function* () {
        const qs = queryOf(req)
        const chain = parseChainParam(qs)
        if (isApiError(chain)) return yield* chain
        const token = parseAddress(chain, opt(qs, "token"), "token")
        if (isApiError(token)) return yield* token
        const days = parseIntW(qs, "days", 1, MENTION_MARKS_DAYS_MAX, MENTION_MARKS_DAYS_DEFAULT)
        if (isApiError(days)) return yield* days
        const limit = parseIntW(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isApiError(limit)) return yield* limit
        const core = deps.index.market(chain, token)
        if (core === undefined) return yield* apiError("MARKET_NOT_FOUND", `No token ${token} on ${chain}`, { field: "token" })
        const found = deps.social.recent({ chain, asset: token, sinceMs: deps.nowMs() - days * DAY_MS, limit }).slice().reverse()
        const at = yield* ch(pricesAt(deps.clickhouse, chain, token, found.map((m) => m.atMs)))
        const usd = yield* pricesFor(deps, chain, [token])
        const info = tokenInfo(deps, chain, token, usd)
        const { decimals, quoteDecimals } = core.identity
        return json(200, {
          chain,
          token,
          symbol: core.identity.symbol,
          quote_asset: info.pair?.id ?? null,
          marks: found.map((m, i) => {
            const p = at[i]!
            const priced = p.tradeAtMs !== null && p.tokenReserveRaw > 0n
            return {
              ...mentionRow(m),
              price: priced ? formatUnits((p.quoteReserveRaw * 10n ** BigInt(decimals) * 10n ** 18n) / (p.tokenReserveRaw * 10n ** BigInt(quoteDecimals)), 18) : null,
              price_usd: priced ? usdPerToken(p.quoteReserveRaw, p.tokenReserveRaw, decimals, quoteDecimals, info.price) : null,
              price_at: iso(p.tradeAtMs)
            }
          })
        })
      })
  )

  const trending = readRoute(
    deps,
    {
      path: "/v1/social/mentions/trending",
      operationId: "dataSocialTrending",
      summary: "Tokens ranked by mentions, then by traded volume, over the window",
      description: "Ranked by mentions in the window, then by gross quote volume in USD, then by address. At most the newest 10,000 mentions of the window are counted.",
      query: [
        chainQ,
        paramQ("window", "1h, 6h, 24h (default) or 7d", { type: "string", enum: Object.keys(TRENDING_WINDOWS), default: "24h" }),
        intQ("limit", "Tokens", 1, 100, 20)
      ]
    },
    (req) =>
      Effect.gen(function* () {
        const qs = queryOf(req)
        const chain = parseChainParam(qs)
        if (isApiError(chain)) return yield* chain
        const window = parseEnumParam(qs, "window", Object.keys(TRENDING_WINDOWS), "24h")
        if (isApiError(window)) return yield* window
        const limit = parseIntW(qs, "limit", 1, 100, 20)
        if (isApiError(limit)) return yield* limit
        const sinceMs = deps.nowMs() - TRENDING_WINDOWS[window]!
        const recent = deps.social.recent({ chain, sinceMs, limit: TRENDING_SCAN_MAX })
        const tallies = tallyMentions(recent, isKol)
        const volumes = yield* ch(mintVolumes(deps.clickhouse, chain, [...tallies.keys()], sinceMs))
        const volumeOf = new Map(volumes.map((v) => [v.mint, v]))
        const usd = yield* pricesFor(deps, chain, tallies.keys())
        const ranked = rankTrending(
          Array.from(tallies, ([mint, tally]) => {
            const info = tokenInfo(deps, chain, mint, usd)
            const v = volumeOf.get(mint)
            const volumeUsdMicros = v === undefined ? 0n : info.core === undefined ? null : usdMicrosOf(v.volumeQuoteRaw, info.core.identity.quoteDecimals, info.price)
            return { mint, tally, info, v, volumeUsdMicros }
          })
        )
        return json(200, {
          chain,
          window,
          since: iso(sinceMs),
          mentions_scanned: recent.length,
          tokens: ranked.slice(0, limit).map(({ mint, tally, info, v }) => ({
            token: mint,
            symbol: info.core?.identity.symbol ?? null,
            name: info.core?.identity.name ?? null,
            mentions: tally.mentions,
            kol_mentions: tally.kolMentions,
            authors: tally.authors,
            last_mention_at: iso(tally.lastMentionMs),
            trades: v?.trades ?? 0,
            traders: v?.traders ?? 0,
            volume: v === undefined ? "0" : quoteFmt(info, v.volumeQuoteRaw),
            volume_usd: v === undefined ? "0" : usdFmt(info, v.volumeQuoteRaw)
          }))
        })
      })
  )

  return [mentions, mentionMarks, trending]
}
