/**
 * Spec 4.5 `GET /v1/wallets`, `/v1/wallets/{id}`, `/v1/groups`, `/v1/groups/{id}`: the tracked
 * wallets and wallet groups, filtered by plan (Free sees `public`, Pro `public`+`pro`, Max all;
 * Tracking.ts). A wallet or group the plan cannot see answers the same plain 404 as an unknown one.
 */
import { Effect } from "effect"
import { validationFailed } from "../../../src/domain/ApiError.js"
import type { TrackedWallet, WalletGroup } from "../../../src/services/tracking/Tracking.js"
import { json } from "../../Http.js"
import { enumParam, stringParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, type DataCaller, notFound, readRoute } from "./internal/shared.js"
import { intW, kolHandle, type WalletReadDeps } from "./internal/wallet.js"
import { answer, plainError } from "../../OpenApi.js"
import { GroupDetail, Groups, WalletDetail, Wallets } from "./internal/responses.js"

export const DIRECTORY_LIMIT_MAX = 500
export const DIRECTORY_LIMIT_DEFAULT = 100
const DIRECTORY_OFFSET_MAX = 100_000
const WALLET_KINDS = ["smartmoney", "kol", "deployer", "fund"] as const

const walletRow = (w: TrackedWallet, kolHandle: string | null) => ({
  id: w.id,
  chain: w.chain,
  address: w.address,
  label: w.label,
  kind: w.kind,
  visibility: w.visibility,
  groups: w.groups,
  kol: w.kolId === null ? null : { id: w.kolId, handle: kolHandle }
})

const groupRow = (g: WalletGroup, members: ReadonlyArray<string>) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  visibility: g.visibility,
  wallet_ids: members,
  wallets: members.length
})

const idPath = (what: string) => ({ id: stringParam(`The ${what}'s id`, { required: true, emptyIsValue: true }) })

export const directoryRoutes = (deps: WalletReadDeps): ReadonlyArray<RouteDef> => {
  const visibleMembers = (plan: DataCaller["plan"], g: WalletGroup) => g.walletIds.filter((id) => deps.tracking.wallet(plan, id) !== undefined)

  const wallets = readRoute(
    deps,
    {
      path: "/v1/wallets",
      operationId: "dataWallets",
      summary: "Tracked wallets the plan can see (Free: public; Pro: public and pro; Max: all)",
      query: {
        chain: chainQ,
        kind: enumParam("smartmoney, kol, deployer or fund", WALLET_KINDS),
        group: stringParam("Only members of this group (one the plan can see)"),
        limit: intW("Rows", 1, DIRECTORY_LIMIT_MAX, DIRECTORY_LIMIT_DEFAULT),
        offset: intW("Rows skipped", 0, DIRECTORY_OFFSET_MAX, 0)
      },
      responses: { 200: answer("Tracked wallets the plan can see", Wallets) }
    },
    ({ chain, kind, group: groupId, limit, offset }, caller) =>
      Effect.gen(function* () {
        if (groupId !== undefined && deps.tracking.group(caller.plan, groupId) === undefined) return yield* validationFailed("group", `Unknown group '${groupId}'`)
        const all = deps.tracking
          .wallets(caller.plan, chain)
          .filter((w) => (kind === undefined || w.kind === kind) && (groupId === undefined || w.groups.includes(groupId)))
        return json(200, { chain, plan: caller.plan, total: all.length, wallets: all.slice(offset, offset + limit).map((w) => walletRow(w, kolHandle(deps, w.kolId))) } satisfies typeof Wallets.Type)
      })
  )

  const wallet = readRoute(
    deps,
    {
      path: "/v1/wallets/{id}",
      operationId: "dataWallet",
      summary: "One tracked wallet with its visible groups and KOL label",
      pathParams: idPath("wallet"),
      responses: { 200: answer("One tracked wallet", WalletDetail), 404: plainError("{\"error\": \"wallet not found\"} (unknown or not visible to the plan)") }
    },
    ({ id }, caller) =>
      Effect.sync(() => {
        const w = deps.tracking.wallet(caller.plan, id)
        if (w === undefined) return notFound("wallet")
        const kol = w.kolId === null ? undefined : deps.tracking.kols().find((k) => k.id === w.kolId)
        return json(200, {
          ...walletRow(w, kol?.handle ?? null),
          kol: kol === undefined ? null : { id: kol.id, handle: kol.handle, name: kol.name, followers: kol.followers },
          group_details: w.groups.flatMap((g) => {
            const group = deps.tracking.group(caller.plan, g)
            return group === undefined ? [] : [{ id: group.id, name: group.name, visibility: group.visibility }]
          })
        } satisfies typeof WalletDetail.Type)
      })
  )

  const groups = readRoute(deps, { path: "/v1/groups", operationId: "dataGroups", summary: "Wallet groups the plan can see", responses: { 200: answer("Wallet groups the plan can see", Groups) } }, (_input, caller) =>
    Effect.sync(() => json(200, { plan: caller.plan, groups: deps.tracking.groups(caller.plan).map((g) => groupRow(g, visibleMembers(caller.plan, g))) } satisfies typeof Groups.Type))
  )

  const group = readRoute(
    deps,
    {
      path: "/v1/groups/{id}",
      operationId: "dataGroup",
      summary: "One wallet group with its members the plan can see",
      pathParams: idPath("group"),
      responses: { 200: answer("One wallet group with its visible members", GroupDetail), 404: plainError("{\"error\": \"group not found\"} (unknown or not visible to the plan)") }
    },
    ({ id }, caller) =>
      Effect.sync(() => {
        const g = deps.tracking.group(caller.plan, id)
        if (g === undefined) return notFound("group")
        const members = visibleMembers(caller.plan, g)
        return json(200, {
          ...groupRow(g, members),
          members: members.map((id) => {
            const w = deps.tracking.wallet(caller.plan, id)!
            return walletRow(w, kolHandle(deps, w.kolId))
          })
        } satisfies typeof GroupDetail.Type)
      })
  )

  return [wallets, wallet, groups, group]
}
