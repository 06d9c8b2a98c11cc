/**
 * The wallet routes' success bodies (spec document 2, 2.3): `{success: true, ...}` over the wallet
 * service's views (`WalletView`, the embedded wallets of `list`); the type checks below keep each
 * schema and its view the same shape.
 */
import { Schema } from "effect"
import type { EmbeddedWallet } from "../../src/services/wallets/WalletProvider.js"
import type { WalletView } from "../../src/services/wallets/WalletService.js"
import { Success } from "../ResponseSchemas.js"

const WalletChain = Schema.Literal("solana", "evm")

export const Wallet = Schema.Struct({
  id: Schema.String,
  chain: WalletChain,
  address: Schema.String,
  walletKind: Schema.Literal("linked", "imported", "tee"),
  label: Schema.optionalWith(Schema.String, { exact: true }),
  allowLaunch: Schema.Boolean,
  boundKeyPrefix: Schema.optionalWith(Schema.String, { exact: true }).annotations({ description: "TEE wallets: the key the wallet is bound to" }),
  vaultDestination: Schema.optionalWith(Schema.String, { exact: true }).annotations({ description: "TEE wallets: where the vault pays out" }),
  createdAt: Schema.String
}).annotations({ identifier: "Wallet" })

const EmbeddedWalletView = Schema.Struct({
  chain: WalletChain,
  address: Schema.String,
  delegation: Schema.Literal("active", "revoked", "none")
}).annotations({ identifier: "EmbeddedWallet" })

const List = Schema.Struct({ wallets: Schema.Array(Wallet), embeddedWallets: Schema.Array(EmbeddedWalletView) })

export const WalletList = Schema.Struct({ success: Success, ...List.fields }).annotations({ identifier: "WalletList" })
export const WalletEnvelope = Schema.Struct({ success: Success, wallet: Wallet }).annotations({ identifier: "WalletEnvelope" })

// Each schema describes exactly its view: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof Wallet.Type>, Mutable<WalletView>>>()
same<Same<Mutable<typeof EmbeddedWalletView.Type>, Mutable<Omit<EmbeddedWallet, "providerWalletId">>>>()
