/**
 * Spec 4.5 `GET /v1/social/mentions`, `/v1/social/mention-marks`, `/v1/social/mentions/trending`:
 * recent posts naming tokens (newest first), a token's mentions against its price at each
 * (oldest first), and tokens ranked by mentions then USD volume over a window (`SocialTrending`).
 */
import { Effect } from "effect"
import { reservesPrice } from "../../../actors/market/MarketRecord.js"
import type { SocialMention } from "../../../actors/signals/KolMention.js"
import { validationFailed } from "../../../src/domain/ApiError.js"
import { rankTrending, tallyMentions, TRENDING_SCAN_MAX } from "../../../src/services/marketdata/SocialTrending.js"
import { usdMicrosOf, usdPerToken } from "../../../src/services/prices/Money.js"
import { json } from "../../Http.js"
import { enumParam, isApiError, param, parseAddress, stringParam, timeParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, DAY_MS, iso, readRoute } from "./internal/shared.js"
import {
  intW,
  listLimitQ,
  quoteFmt,
  tokenAddress,
  tokenInfo,
  tokenQ,
  usdFmt,
  type WalletReadDeps
} from "./internal/wallet.js"
import { answer, refusal } from "../../OpenApi.js"
import { SocialMentionMarks, SocialMentions, SocialTrending } from "./internal/responses.js"

export const MENTION_MARKS_DAYS_DEFAULT = 7
export const MENTION_MARKS_DAYS_MAX = 30
const TRENDING_WINDOWS: Readonly<Record<string, number>> = { "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": DAY_MS, "7d": 7 * DAY_MS }

/** `kol`: true for KOL authors only (default false). */
const kolQ = param({
  description: "true: only KOL authors",
  schema: { type: "boolean", default: false },
  decode: (raw, name) => (raw === undefined || raw === "false" ? false : raw === "true" ? true : validationFailed(name, `${name} must be one of true, false`))
})

export const socialRoutes = (deps: WalletReadDeps): ReadonlyArray<RouteDef> => {
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
      query: {
        chain: chainQ,
        token: tokenQ("Only this token"),
        since: timeParam("From this time: ISO 8601 or epoch ms"),
        kol: kolQ,
        limit: listLimitQ("Rows")
      },
      responses: { 200: answer("Recent posts naming tokens, newest first", SocialMentions) }
    },
    ({ chain, since, kol, limit, ...input }) =>
      Effect.gen(function* () {
        const token = tokenAddress(chain, input.token)
        if (isApiError(token)) return yield* token
        const base = { chain, ...(token === undefined ? {} : { asset: token }), ...(since === undefined ? {} : { sinceMs: since }) }
        const found =
          kol
            ? deps.social
                .recent({ ...base, limit: TRENDING_SCAN_MAX })
                .filter((m) => isKol(m.author))
                .slice(0, limit)
            : deps.social.recent({ ...base, limit })
        return json(200, { chain, mentions: found.map(mentionRow) } satisfies typeof SocialMentions.Type)
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
      query: {
        chain: chainQ,
        token: stringParam("The token", { required: true }),
        days: intW("Look back this many days", 1, MENTION_MARKS_DAYS_MAX, MENTION_MARKS_DAYS_DEFAULT),
        limit: listLimitQ("Marks (newest)")
      },
      responses: { 200: answer("The token's mentions with the price in force at each", SocialMentionMarks), 404: refusal(["MARKET_NOT_FOUND"]) }
    },
    ({ chain, days, limit, ...input }) =>
      Effect.gen(function* () {
        const token = parseAddress(chain, input.token, "token")
        if (isApiError(token)) return yield* token
        const core = yield* deps.data.tokenIn(chain, token, "token")
        const found = deps.social.recent({ chain, asset: token, sinceMs: deps.nowMs() - days * DAY_MS, limit }).slice().reverse()
        const at = yield* deps.data.pricesAt(chain, token, found.map((m) => m.atMs))
        const usd = yield* deps.data.usdOfMints(chain, [token])
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
              price: priced ? reservesPrice(p.quoteReserveRaw, p.tokenReserveRaw, decimals, quoteDecimals) : null,
              price_usd: priced ? usdPerToken(p.quoteReserveRaw, p.tokenReserveRaw, decimals, quoteDecimals, info.price) : null,
              price_at: iso(p.tradeAtMs)
            }
          })
        } satisfies typeof SocialMentionMarks.Type)
      })
  )

  const trending = readRoute(
    deps,
    {
      path: "/v1/social/mentions/trending",
      operationId: "dataSocialTrending",
      summary: "Tokens ranked by mentions, then by traded volume, over the window",
      description: "Ranked by mentions in the window, then by gross quote volume in USD, then by address. At most the newest 10,000 mentions of the window are counted.",
      query: {
        chain: chainQ,
        window: enumParam("1h, 6h, 24h (default) or 7d", ["1h", "6h", "24h", "7d"] as const, { default: "24h" }),
        limit: intW("Tokens", 1, 100, 20)
      },
      responses: { 200: answer("Tokens ranked by mentions, then volume", SocialTrending) }
    },
    ({ chain, window, limit }) =>
      Effect.gen(function* () {
        const sinceMs = deps.nowMs() - TRENDING_WINDOWS[window]!
        const recent = deps.social.recent({ chain, sinceMs, limit: TRENDING_SCAN_MAX })
        const tallies = tallyMentions(recent, isKol)
        const volumes = yield* deps.data.mintVolumes(chain, [...tallies.keys()], sinceMs)
        const volumeOf = new Map(volumes.map((v) => [v.mint, v]))
        const usd = yield* deps.data.usdOfMints(chain, tallies.keys())
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
        } satisfies typeof SocialTrending.Type)
      })
  )

  return [mentions, mentionMarks, trending]
}
