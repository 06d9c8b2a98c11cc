/**
 * Withdrawal-address and wallet-trust routes (spec document 2: 2.1 "Only Withdraw moves funds",
 * section 4 rule 3, section 5 rule 7, section 6). Each route authenticates through the injected
 * `authenticate` (the wallet routes' port) and checks the credential kind and scope itself; the
 * rules a credential kind cannot pass (an agent key adding an address) are the services' to
 * decide, so the refusal is the table's (`LOOSEN_REQUIRES_SESSION`).
 *
 * Credential kinds: adding an address takes any credential and the service admits a session only;
 * listing takes any; revoking takes an owner or an agent key with `transfer:write` (a key may
 * narrow its own reach); trust takes a session or a device token.
 */
import { isAddress as isSolanaAddress } from "@solana/kit"
import { Effect, Schema } from "effect"
import { isAddress as isEvmAddress } from "viem"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import type { TransferCaller, TransferServiceShape } from "../../src/services/transfers/TransferService.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { answer } from "../OpenApi.js"
import { TRUST_BATCH_MAX, type TrustedWalletsShape } from "../../src/services/transfers/TrustedWallets.js"
import { WITHDRAWAL_LABEL_MAX_CHARS, type WithdrawalAddressesShape } from "../../src/services/transfers/WithdrawalAddresses.js"
import { parseWalletChain, type WalletChain } from "../../src/services/wallets/ChainKeys.js"
import { AUTH_HEADERS, type AuthNeed, type CredentialKind, holdsScope, type Principal } from "../../src/services/wallets/Principal.js"
import { AGENT_AUTH_HEADERS, type AgentAuth } from "../auth/AgentKeyAuth.js"
import { ErrorTable } from "../ErrorTable.js"
import type { Request } from "../Http.js"
import { callerRefusals, keyCheckRefusals, mergeCodes, tableRefusals } from "../RouteRefusals.js"
import { param, stringParam } from "../QueryParams.js"
import { route, type RouteDef } from "../Router.js"
import { reply } from "./ServiceCall.js"
import { TransferResult, TrustedWalletList, WalletTrustResult, WithdrawalAddressAdded, WithdrawalAddressList, WithdrawalAddressRevoked } from "./TransferResponses.js"
import type { Authenticate } from "./WalletRoutes.js"
import { validationFailed } from "../../src/domain/ApiError.js"

export interface TransferRoutesDeps {
  readonly addresses: WithdrawalAddressesShape
  readonly trust: TrustedWalletsShape
  readonly authenticate: Authenticate
}

export const TRANSFER_BODY_MAX_BYTES = 16 * 1024
/** Ids are generated (`wad_…`, wallet ids); anything longer is not one. */
const ID_MAX_CHARS = 128
/** The longest address text of either chain (base58 of 32 bytes is at most 44; EVM 42). */
const ADDRESS_MAX_CHARS = 64

const ANY: ReadonlyArray<CredentialKind> = ["agentKey", "session", "device"]
const OWNER: ReadonlyArray<CredentialKind> = ["session", "device"]
const credentialName: Record<CredentialKind, string> = { session: "a session", device: "a device token", agentKey: "an agent key" }

const admit = (p: Principal, need: AuthNeed): Effect.Effect<Principal, ApiError> => {
  if (!need.credentials.includes(p.credential)) {
    return Effect.fail(apiError("UNAUTHORIZED", `This route takes ${need.credentials.map((c) => credentialName[c]).join(" or ")}, not ${credentialName[p.credential]}`))
  }
  if (need.scope !== undefined && !holdsScope(p, need.scope)) {
    return Effect.fail(apiError("SCOPE_MISSING", `The key lacks the ${need.scope} scope`, { extra: { scope: need.scope } }))
  }
  return Effect.succeed(p)
}

const Chain = Schema.Literal("solana", "evm", "hood").annotations({ description: "solana, or evm (hood is accepted as its name)" })
const Label = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(WITHDRAWAL_LABEL_MAX_CHARS))

export const AddWithdrawalAddressBody = Schema.Struct({
  chain: Chain,
  address: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(ADDRESS_MAX_CHARS)),
  label: Schema.optionalWith(Label, { exact: true })
}).annotations({ identifier: "AddWithdrawalAddressBody", description: "`{chain, address, label?}`; EVM addresses must carry their EIP-55 checksum" })

export const TrustBody = Schema.Struct({
  walletIds: Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(ID_MAX_CHARS))).pipe(Schema.minItems(1), Schema.maxItems(TRUST_BATCH_MAX)),
  trusted: Schema.Boolean
}).annotations({ identifier: "WalletTrustBody", description: `\`{walletIds (1 to ${TRUST_BATCH_MAX} distinct linked wallet ids), trusted}\`` })

/** Every transfer-side service fails with `TransferError`. */
const T = ErrorTable.TransferError
/** A route's refusals: its caller check's and the transfer rows (`own`: what the route decodes itself). */
const refusals = (need: AuthNeed, own: Readonly<Record<number, ReadonlyArray<"VALIDATION_FAILED">>> = {}) => tableRefusals([T], mergeCodes(callerRefusals(need), own))

const chainOf = (c: "solana" | "evm" | "hood"): WalletChain => (c === "solana" ? "solana" : "evm")

const chainQuery = {
  chain: param<WalletChain | undefined>({
    description: "Only this chain's addresses: solana or evm (hood)",
    schema: { type: "string", enum: ["solana", "evm", "hood"] },
    decode: (raw) => (raw === undefined ? undefined : (parseWalletChain(raw) ?? validationFailed("chain", "chain must be solana or evm")))
  })
}

export const transferRoutes = (deps: TransferRoutesDeps): ReadonlyArray<RouteDef> => {
  const { addresses, trust, authenticate } = deps
  const caller =
    (need: AuthNeed) =>
    (req: Request): Effect.Effect<Principal, ApiError> =>
      Effect.flatMap(authenticate(req.headers, need), (p) => admit(p, need))
  const needs = {
    anyone: { credentials: ANY },
    reader: { credentials: ANY, whilePaused: "allow" },
    revoker: { credentials: ANY, scope: "transfer:write" },
    owner: { credentials: OWNER }
  } as const satisfies Record<string, AuthNeed>
  const anyone = caller(needs.anyone)
  const reader = caller(needs.reader)
  const revoker = caller(needs.revoker)
  const owner = caller(needs.owner)

  return [
    route({
      method: "GET",
      path: "/api/v1/agent/withdrawal-addresses",
      operationId: "listWithdrawalAddresses",
      summary: "The account's approved withdrawal addresses, oldest first",
      tags: ["transfers"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      query: chainQuery,
      responses: { 200: { description: "`{success, addresses[] {id, chain, address, label?, createdAt}}`", schema: WithdrawalAddressList }, ...refusals(needs.reader, { 400: ["VALIDATION_FAILED"] }) },
      authenticate: reader,
      handler: (_req, { chain }, p) => reply(Effect.map(addresses.list(p, chain), (list) => ({ addresses: list })))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/withdrawal-addresses",
      operationId: "addWithdrawalAddress",
      summary: "Approve a withdrawal address (a signed-in session only; an agent key is refused LOOSEN_REQUIRES_SESSION)",
      description: "Adding an address already active returns it (`created: false`) and writes no event.",
      tags: ["transfers"],
      auth: "session",
      headers: AUTH_HEADERS,
      body: { schema: AddWithdrawalAddressBody, maxBytes: TRANSFER_BODY_MAX_BYTES },
      responses: {
        200: { description: "`{success, address {id, chain, address, label?, createdAt}, created}`", schema: WithdrawalAddressAdded },
        ...refusals(needs.anyone)
      },
      authenticate: anyone,
      handler: (_req, { body }, p) =>
        reply(addresses.add(p, { chain: chainOf(body.chain), address: body.address, ...(body.label !== undefined ? { label: body.label } : {}) }))
    }),
    route({
      method: "DELETE",
      path: "/api/v1/agent/withdrawal-addresses/{id}",
      operationId: "revokeWithdrawalAddress",
      summary: "Revoke a withdrawal address; idempotent",
      tags: ["transfers"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      pathParams: { id: stringParam("Withdrawal address id", { required: true, emptyIsValue: true }) },
      responses: { 200: { description: "`{success, id, revokedAt}`", schema: WithdrawalAddressRevoked }, ...refusals(needs.revoker) },
      authenticate: revoker,
      handler: (_req, { id }, p) => reply(addresses.revoke(p, id))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/wallets/trusted",
      operationId: "listTrustedWallets",
      summary: "The account's linked wallets the owner marked trusted",
      tags: ["transfers"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      responses: { 200: { description: "`{success, wallets[] {id, chain, address, label?, trusted}}`", schema: TrustedWalletList }, ...refusals(needs.reader) },
      authenticate: reader,
      handler: (_req, _input, p) => reply(Effect.map(trust.listTrusted(p), (wallets) => ({ wallets })))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/wallets/trust",
      operationId: "setWalletTrust",
      summary: "Owner: mark or clear trust on linked wallets in one batch (one event per request)",
      description: "All or nothing: an id that is not an active linked wallet of the account refuses the batch.",
      tags: ["transfers"],
      auth: "session",
      headers: AUTH_HEADERS,
      body: { schema: TrustBody, maxBytes: TRANSFER_BODY_MAX_BYTES },
      responses: { 200: { description: "`{success, batchId, wallets[], changed}`", schema: WalletTrustResult }, ...refusals(needs.owner) },
      authenticate: owner,
      handler: (_req, { body }, p) => reply(trust.setTrust(p, body.walletIds, body.trusted))
    })
  ]
}

// --- the transfer rail ---------------------------------------------------------------------------

/** `clientTransferId` and asset names are short; raw amounts fit u256. */
const CLIENT_ID_MAX_CHARS = 128
const AMOUNT_MAX_DIGITS = 78

const SOLANA_ASSETS = new Set(["sol", "usdc", "svc"])
const HOOD_ASSETS = new Set(["eth", "usdg"])

/** Hood: a valid address in any case; a mixed-case address must carry a correct EIP-55 checksum (viem's strict check). */
const isHoodAddress = (a: string): boolean => isEvmAddress(a, { strict: true })

export const TransferBuildBody = Schema.Struct({
  clientTransferId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(CLIENT_ID_MAX_CHARS)),
  chain: Schema.Literal("solana", "hood", "evm").annotations({ description: "solana or hood (evm is accepted as its name)" }),
  asset: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(ADDRESS_MAX_CHARS)),
  amountRaw: Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*$/), Schema.maxLength(AMOUNT_MAX_DIGITS)),
  to: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(ADDRESS_MAX_CHARS)),
  dryRun: Schema.optionalWith(Schema.Boolean, { exact: true }),
  payer: Schema.optionalWith(Schema.Literal("main", "tee"), { exact: true }).annotations({
    description: "main (default): the embedded wallet, signed server-side; tee: the TEE wallet bound to this key (linkedWalletId), signed through the sign relay"
  }),
  linkedWalletId: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(ID_MAX_CHARS)), { exact: true }).annotations({
    description: "payer tee: the paying TEE wallet's id"
  })
}).pipe(
  Schema.filter((b) => {
    if ((b.payer ?? "main") === "main" && b.linkedWalletId !== undefined) return { path: ["linkedWalletId"], message: "payer main sends from the embedded wallet: send linkedWalletId with payer tee" }
    if (b.payer === "tee" && b.linkedWalletId === undefined) return { path: ["linkedWalletId"], message: "payer tee needs linkedWalletId: the TEE wallet bound to this key" }
    const solana = b.chain === "solana"
    const assetOk = solana ? SOLANA_ASSETS.has(b.asset) || isSolanaAddress(b.asset) : HOOD_ASSETS.has(b.asset) || isHoodAddress(b.asset)
    if (!assetOk) {
      return { path: ["asset"], message: solana ? "asset must be sol, usdc, svc or an SPL mint address" : "asset must be eth, usdg or a token address (EIP-55 when mixed case)" }
    }
    const toOk = solana ? isSolanaAddress(b.to) : isHoodAddress(b.to)
    if (!toOk) return { path: ["to"], message: solana ? "to must be a base58 Solana address" : "to must be an EVM address (EIP-55 when mixed case)" }
    return true
  }),
  Schema.annotations({
    identifier: "TransferBuildBody",
    description:
      "`{clientTransferId, chain, asset (solana: sol | usdc | svc | mint; hood: eth | usdg | token address), amountRaw, to, dryRun?, payer?, linkedWalletId?}`; payer main (default) is the embedded wallet, payer tee the TEE wallet bound to the key (Solana and Hood)"
  })
)

/** A signed v0 transfer in base64 (1,232 bytes at most on the wire); a signed Hood transfer in 0x-hex is far shorter. */
const SIGNED_TRANSACTION_BASE64_CHARS_MAX = 1_644

/** Solana: base64 wire bytes; Hood: the 0x-hex serialized transaction (as the sign relay answers each). */
export const signedBytesOf = (text: string): Uint8Array => new Uint8Array(text.startsWith("0x") ? Buffer.from(text.slice(2), "hex") : Buffer.from(text, "base64"))

export const TransferSubmitBody = Schema.Struct({
  clientTransferId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(CLIENT_ID_MAX_CHARS)),
  signedTransaction: Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(SIGNED_TRANSACTION_BASE64_CHARS_MAX),
    Schema.pattern(/^(?:0x(?:[0-9a-fA-F]{2})+|(?!0x)[A-Za-z0-9+/]+={0,2})$/)
  ).annotations({
    description: "The built transaction with the TEE wallet's signature: Solana base64 wire bytes, Hood the 0x-hex serialized signed transaction"
  })
}).annotations({ identifier: "TransferSubmitBody", description: "`{clientTransferId, signedTransaction}`: a TEE build's transaction, signed" })

export interface TransferRailDeps {
  readonly agentAuth: AgentAuth
  readonly transfers: TransferServiceShape
}

/**
 * `POST /api/v1/agent/transfer/build` (spec document 2: 2.1, 3.2, "Transaction-limit rules"): a
 * live key with `transfer:write` (the Withdraw level). Payer main: the embedded wallet signs and
 * the transfer is sent and confirmed in the call, as the staking rail's embedded payer is. Payer
 * tee (the key also holds `transfer:bound`): the unsigned transaction and its sign claim, recorded
 * `built`; `POST /api/v1/agent/transfer/submit` takes it signed and sends it once.
 */
const TRANSFER_WRITES = { scopes: ["transfer:write"], testKeys: "forbid" } as const

const railRefusals = tableRefusals([T, ErrorTable.SpendError, ErrorTable.PayerError, ErrorTable.SignClaimError, ErrorTable.WalletError], keyCheckRefusals(TRANSFER_WRITES))

const callerOf = (p: AgentPrincipal): TransferCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  embeddedWallet: p.key.embeddedWallet,
  principal: agentToWalletPrincipal(p)
})

export const transferRailRoutes = (deps: TransferRailDeps): ReadonlyArray<RouteDef> => [
  route({
    method: "POST",
    path: "/api/v1/agent/transfer/build",
    operationId: "buildTransfer",
    summary:
      "Withdraw level: move funds from the embedded wallet to one of the account's own wallets or an approved withdrawal address, or (payer tee) out of the bound TEE wallet to its pinned vault or a wallet the owner linked while signed in or marked trusted",
    description:
      "Payer main answers `status: confirmed` with `signature` once the chain confirmed it (`sending` when it has not yet; a replay under the same `clientTransferId` answers the same transfer and sends nothing). Payer tee answers `status: built` with the unsigned `transaction` and its `signClaim`: sign it through the wallet's sign relay, then POST /api/v1/agent/transfer/submit. `dryRun` checks everything and answers `status: ready` with `createsAccount`.",
    tags: ["transfers"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: { schema: TransferBuildBody, maxBytes: TRANSFER_BODY_MAX_BYTES },
    responses: {
      200: answer("The transfer as it stands: `confirmed` with its signature, `sending`, `built` (payer tee, unsigned), or `ready` for a dry run", TransferResult),
      ...railRefusals
    },
    authenticate: (req) => deps.agentAuth.authenticate(req.headers, TRANSFER_WRITES),
    handler: (_req, { body }, p) =>
      reply(
        deps.transfers.build(callerOf(p), {
          clientTransferId: body.clientTransferId,
          chain: body.chain === "solana" ? "solana" : "hood",
          asset: body.asset,
          amountRaw: BigInt(body.amountRaw),
          to: body.to,
          dryRun: body.dryRun ?? false,
          ...(body.payer === "tee" && body.linkedWalletId !== undefined ? { payer: "tee" as const, linkedWalletId: body.linkedWalletId } : {})
        })
      )
  }),
  route({
    method: "POST",
    path: "/api/v1/agent/transfer/submit",
    operationId: "submitTransfer",
    summary: "Withdraw level, payer tee: a built transfer's signed transaction, verified and sent once",
    description:
      "Exactly the built transaction with the TEE wallet's valid signature (anything else is refused and nothing changes); sent once, whatever the number of concurrent submits; answers `confirmed` with `signature` once the chain confirmed it. Refused SCOPE_MISSING once the key no longer holds transfer:bound.",
    tags: ["transfers"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: { schema: TransferSubmitBody, maxBytes: TRANSFER_BODY_MAX_BYTES },
    responses: {
      200: answer("The transfer as it stands: `confirmed` with its signature, or `sending`", TransferResult),
      ...railRefusals
    },
    authenticate: (req) => deps.agentAuth.authenticate(req.headers, TRANSFER_WRITES),
    handler: (_req, { body }, p) =>
      reply(deps.transfers.submit(callerOf(p), { clientTransferId: body.clientTransferId, signedTransaction: signedBytesOf(body.signedTransaction) }))
  })
]
