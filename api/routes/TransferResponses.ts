/**
 * The withdrawal-address and wallet-trust routes' success bodies (spec document 2: 2.1, section 5
 * rule 7): `{success: true, ...}` over the services' views; the type checks below keep each schema
 * and its view the same shape.
 */
import { Schema } from "effect"
import type { TransferView } from "../../src/services/transfers/TransferService.js"
import type { TrustedWalletView, TrustResult } from "../../src/services/transfers/TrustedWallets.js"
import type { WithdrawalAddressesShape, WithdrawalAddressView } from "../../src/services/transfers/WithdrawalAddresses.js"
import { RawAmount, Success } from "../ResponseSchemas.js"

const WalletChain = Schema.Literal("solana", "evm")

const WithdrawalAddress = Schema.Struct({
  id: Schema.String,
  chain: WalletChain,
  address: Schema.String,
  label: Schema.optionalWith(Schema.String, { exact: true }),
  createdAt: Schema.String
}).annotations({ identifier: "WithdrawalAddress" })

const TrustedWallet = Schema.Struct({
  id: Schema.String,
  chain: WalletChain,
  address: Schema.String,
  label: Schema.optionalWith(Schema.String, { exact: true }),
  trusted: Schema.Boolean
}).annotations({ identifier: "TrustedWallet" })

const Added = Schema.Struct({ address: WithdrawalAddress, created: Schema.Boolean })
const Revoked = Schema.Struct({ id: Schema.String, revokedAt: Schema.String })
const Trust = Schema.Struct({ batchId: Schema.String, wallets: Schema.Array(TrustedWallet), changed: Schema.Int })

const Transfer = Schema.Struct({
  status: Schema.Literal("ready", "built", "sending", "confirmed").annotations({
    description: "ready: a dry run's; built: a TEE build waiting for its signed transaction (POST /transfer/submit); sending: not confirmed yet; confirmed: on chain"
  }),
  clientTransferId: Schema.String,
  chain: Schema.Literal("solana", "hood"),
  asset: Schema.String,
  amountRaw: RawAmount,
  from: Schema.String,
  to: Schema.String,
  destinationClass: Schema.Literal("own", "approved"),
  destinationKind: Schema.String,
  walletId: Schema.optionalWith(Schema.String, { exact: true }),
  signature: Schema.optionalWith(Schema.String, { exact: true }),
  replay: Schema.Boolean,
  createsAccount: Schema.optionalWith(Schema.Boolean, { exact: true }).annotations({ description: "dry run: whether the transfer creates the destination's token account" }),
  payer: Schema.Literal("main", "tee").annotations({ description: "main: the embedded wallet, signed server-side; tee: the TEE wallet bound to the key, signed through the sign relay" }),
  linkedWalletId: Schema.optionalWith(Schema.String, { exact: true }).annotations({ description: "payer tee: the paying TEE wallet's id" }),
  transaction: Schema.optionalWith(Schema.String, { exact: true }).annotations({ description: "built: the unsigned transaction; Solana base64 wire bytes (the TEE wallet's signature slot empty), Hood the 0x-hex serialized EIP-1559 transaction" }),
  signClaim: Schema.optionalWith(Schema.Struct({ claimId: Schema.String, expiresAt: Schema.String }), { exact: true }).annotations({
    description: "built: the single-use claim the wallet's sign relay (POST /api/v1/agent/wallets/{id}/sign) signs these exact bytes under"
  }),
  lastValidBlockHeight: Schema.optionalWith(Schema.String, { exact: true }).annotations({ description: "built (Solana): past this block height the transaction can never land" })
})

export const TransferResult = Schema.Struct({ success: Success, ...Transfer.fields }).annotations({ identifier: "TransferResult" })
export const WithdrawalAddressList = Schema.Struct({ success: Success, addresses: Schema.Array(WithdrawalAddress) }).annotations({ identifier: "WithdrawalAddressList" })
export const WithdrawalAddressAdded = Schema.Struct({ success: Success, ...Added.fields }).annotations({ identifier: "WithdrawalAddressEnvelope" })
export const WithdrawalAddressRevoked = Schema.Struct({ success: Success, ...Revoked.fields }).annotations({ identifier: "RevokeWithdrawalAddress" })
export const TrustedWalletList = Schema.Struct({ success: Success, wallets: Schema.Array(TrustedWallet) }).annotations({ identifier: "TrustedWalletList" })
export const WalletTrustResult = Schema.Struct({ success: Success, ...Trust.fields }).annotations({ identifier: "WalletTrustResult" })

// Each schema describes exactly its view: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
type Answer<F extends (...a: never) => unknown> = ReturnType<F> extends import("effect").Effect.Effect<infer A, infer _E, infer _R> ? A : never
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof WithdrawalAddress.Type>, Mutable<WithdrawalAddressView>>>()
same<Same<Mutable<typeof TrustedWallet.Type>, Mutable<TrustedWalletView>>>()
same<Same<Mutable<typeof Added.Type>, Mutable<Answer<WithdrawalAddressesShape["add"]>>>>()
same<Same<Mutable<typeof Revoked.Type>, Mutable<Answer<WithdrawalAddressesShape["revoke"]>>>>()
same<Same<Mutable<typeof Trust.Type>, Mutable<TrustResult>>>()
same<Same<Mutable<typeof Transfer.Type>, Mutable<TransferView>>>()
