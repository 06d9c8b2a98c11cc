/**
 * A decoded Hood self-signed launch body for unit tests: "Curve Cat" on v4, paid by linked
 * wallet `w-1`, with `over` merged in; a refusal throws. Shared by the Hood self-signed rules'
 * tests and the self-signed dry-run view's.
 */
import { Either } from "effect"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { decodeSelfLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"

export const launchDecodeSettings = {
  expCustomCurves: true,
  devBuyCeilings: DefaultDevBuyCeilings,
  hostedImageUrlPrefix: "http://127.0.0.1:8080/api/v1/uploads/images/"
}

export const hoodSelfLaunchBodyOf = (over: Record<string, unknown>) => {
  const decoded = decodeSelfLaunchRequest(
    { clientLaunchId: "l-1", name: "Curve Cat", symbol: "CCAT", imageUrl: "https://images.example.com/cat.png", chain: "hood", dexVersion: "v4", linkedWalletId: "w-1", ...over },
    { keyEnvironment: "production" },
    launchDecodeSettings
  )
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}
