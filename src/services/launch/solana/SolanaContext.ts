/**
 * What the parts of `SolanaLaunch` share: its options and validated figures, the wallet provider,
 * the node's RPC client (one call is `read`, a failure `chain_unavailable`), the mint secret,
 * sizing's stand-in mint, the treasury, the wire codecs, and the build deadline (`timedBuild`). Built once by
 * `SolanaLaunch.make`.
 */
import {
  type Address,
  address,
  type KeyPairSigner,
  getBase64Decoder,
  getBase64Encoder,
  getTransactionEncoder
} from "@solana/kit"
import { Duration, Effect } from "effect"
import type { Arrivals } from "../../chains/ChainArrivals.js"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import type { SolanaLaunchOptions } from "../SolanaLaunch.js"
import { launchError } from "../SolanaLaunchError.js"
import { createNodeSolanaRpc } from "../../../chain/internal/JsonRpcHttp.js"

export interface SolanaFigures {
  readonly buildTimeoutMs: number
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
}

export type SolanaContext = ReturnType<typeof makeSolanaContext>

export const makeSolanaContext = (
  options: SolanaLaunchOptions,
  provider: WalletProviderShape,
  figures: SolanaFigures,
  secret: Uint8Array,
  sizingMint: KeyPairSigner,
  arrivals?: Arrivals
) => {
  const { buildTimeoutMs, confirmTimeoutMs, pollIntervalMs } = figures
  const rpc = createNodeSolanaRpc(options.rpcUrl)
  /** The build deadline: `build_timeout` naming what was being built. */
  const timedBuild =
    (what: string, after = "") =>
    <A, E, R>(build: Effect.Effect<A, E, R>) =>
      build.pipe(
        Effect.timeoutFail({
          duration: Duration.millis(buildTimeoutMs),
          onTimeout: () => launchError("build_timeout", `building ${what} took over ${buildTimeoutMs} ms${after}`)
        })
      )
  /** One RPC call; a failure is `chain_unavailable` (interruption aborts the request). */
  const read = <A>(what: string, call: (signal: AbortSignal) => Promise<A>) =>
    Effect.tryPromise({ try: call, catch: (e) => launchError("chain_unavailable", `${what} failed: ${String(e)}`) })
  const treasury: Address = address(options.treasury)
  return {
    options,
    provider,
    rpc,
    secret,
    /** The stand-in mint every size uses (`SolanaRules.SIZING_MINT_ID`), derived once. */
    sizingMint,
    treasury,
    base64: getBase64Decoder(),
    fromBase64: getBase64Encoder(),
    encoder: getTransactionEncoder(),
    buildTimeoutMs,
    confirmTimeoutMs,
    pollIntervalMs,
    timedBuild,
    read,
    /** The transactions the ingest stream delivered (`ChainArrivals`); absent: confirmations wait for the poll. */
    arrivals
  }
}
