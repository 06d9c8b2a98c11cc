/**
 * The wallet routes' success bodies (spec document 2, 2.3): `{success: true, ...}` over the wallet
 * service's views (`WalletView`, the embedded wallets of `list`); the type checks below keep each
 * schema and its view the same shape.
 */
import { Schema } from "effect"
import { HPKE_PARAMETERS } from "../../src/services/wallets/Hpke.js"
import type { EmbeddedWallet } from "../../src/services/wallets/WalletProvider.js"
import type { ImportInit, RebindRecord, RebindResult, RevokeResult, SignResult, WalletView } from "../../src/services/wallets/WalletService.js"
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

const Revoke = Schema.Struct({ id: Schema.String, revokedAt: Schema.String, policyNeutralized: Schema.optionalWith(Schema.Boolean, { exact: true }) })
const Signed = Schema.Struct({ walletId: Schema.String, chain: WalletChain, claimId: Schema.String, signature: Schema.String, signedTransaction: Schema.String })
const Hpke = Schema.Struct({
  mode: Schema.Literal(HPKE_PARAMETERS.mode),
  kem: Schema.Literal(HPKE_PARAMETERS.kem),
  kemId: Schema.Literal(HPKE_PARAMETERS.kemId),
  kdf: Schema.Literal(HPKE_PARAMETERS.kdf),
  kdfId: Schema.Literal(HPKE_PARAMETERS.kdfId),
  aead: Schema.Literal(HPKE_PARAMETERS.aead),
  aeadId: Schema.Literal(HPKE_PARAMETERS.aeadId),
  info: Schema.Literal(HPKE_PARAMETERS.info),
  aad: Schema.Literal(HPKE_PARAMETERS.aad),
  publicKeyEncoding: Schema.Literal(HPKE_PARAMETERS.publicKeyEncoding),
  plaintext: Schema.Literal(HPKE_PARAMETERS.plaintext)
})
const Init = Schema.Struct({
  importId: Schema.String,
  chain: WalletChain,
  address: Schema.String,
  encryptionPublicKey: Schema.String.annotations({ description: "The recipient's P-256 public key, base64 of the uncompressed point" }),
  hpke: Hpke,
  expiresAt: Schema.Int.annotations({ description: "Epoch milliseconds" })
})

const Rebind = Schema.Struct({
  auditId: Schema.String,
  walletId: Schema.String,
  address: Schema.NullOr(Schema.String),
  chain: Schema.NullOr(Schema.String),
  fromKeyPrefix: Schema.String,
  toKeyPrefix: Schema.String,
  actor: Schema.String,
  actorDevicePrefix: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }).annotations({ description: "Only when a device token rebound" }),
  at: Schema.String
}).annotations({ identifier: "RebindRecord" })

/** The rebind's target key as the answer shows it (`toKeyView`). */
const RebindTarget = Schema.Struct({
  keyPrefix: Schema.String,
  label: Schema.NullOr(Schema.String),
  paused: Schema.Boolean,
  walletScope: Schema.Literal("all", "selected"),
  tradeReady: Schema.Struct({ sol: Schema.Boolean, usdc: Schema.Boolean }).annotations({ description: "False for an asset the key caps at zero" }),
  hoodTradeReady: Schema.Struct({ eth: Schema.Boolean, usdg: Schema.Boolean }),
  missingCaps: Schema.Array(Schema.String).annotations({ description: "The assets the key caps at zero, sorted" }),
  launchScope: Schema.Struct({ launchWrite: Schema.Boolean, allowLaunchWallets: Schema.Int })
})
const RebindWallet = {
  id: Schema.String,
  address: Schema.String,
  label: Schema.NullOr(Schema.String),
  allowLaunch: Schema.Boolean,
  chain: WalletChain
}
const Rebound = Schema.Struct({
  ...RebindWallet,
  fromKeyPrefix: Schema.NullOr(Schema.String),
  auditId: Schema.optionalWith(Schema.String, { exact: true }).annotations({ description: "Only on a commit: the audit row" })
})
const RebindAnswer = Schema.Struct({
  dryRun: Schema.Boolean,
  toKey: RebindTarget,
  rebound: Schema.Array(Rebound),
  unchanged: Schema.Array(Schema.Struct(RebindWallet))
})

export const RebindResponse = Schema.Struct({ success: Success, ...RebindAnswer.fields }).annotations({ identifier: "RebindResponse" })
export const Rebinds = Schema.Struct({ success: Success, rebinds: Schema.Array(Rebind) }).annotations({ identifier: "Rebinds" })
export const WalletList = Schema.Struct({ success: Success, ...List.fields }).annotations({ identifier: "WalletList" })
export const WalletRevoked = Schema.Struct({ success: Success, ...Revoke.fields }).annotations({ identifier: "RevokeWallet" })
export const WalletSigned = Schema.Struct({ success: Success, ...Signed.fields }).annotations({ identifier: "SignResult" })
export const ImportInitAnswer = Schema.Struct({ success: Success, ...Init.fields }).annotations({ identifier: "ImportInit" })
export const LinkChallenge = Schema.Struct({ success: Success, chain: WalletChain, address: Schema.String, message: Schema.String }).annotations({
  identifier: "LinkChallenge"
})
export const WalletEnvelope = Schema.Struct({ success: Success, wallet: Wallet }).annotations({ identifier: "WalletEnvelope" })

// Each schema describes exactly its view: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof Wallet.Type>, Mutable<WalletView>>>()
same<Same<Mutable<typeof EmbeddedWalletView.Type>, Mutable<Omit<EmbeddedWallet, "providerWalletId">>>>()
same<Same<Mutable<typeof Revoke.Type>, Mutable<RevokeResult>>>()
same<Same<Mutable<typeof Signed.Type>, Mutable<SignResult>>>()
same<Same<Mutable<typeof Init.Type>, Mutable<Omit<ImportInit, "expiresAtMs"> & { readonly expiresAt: number }>>>()
same<Same<Mutable<typeof Rebind.Type>, Mutable<RebindRecord>>>()
same<Same<Mutable<typeof RebindAnswer.Type>, Mutable<RebindResult>>>()
