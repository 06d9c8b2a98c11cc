/**
 * Which tracked wallets the labelled-trades read (spec 4.5 `/v1/market/labelled-trades`) counts
 * as smart money or KOL. A wallet is a KOL when its kind is `kol` or it carries a KOL label; a
 * KOL is never smart money, so the two kinds never share a wallet. Without a kind, both.
 */
import type { TrackedWallet } from "../tracking/Tracking.js"

export type LabelKind = "smartmoney" | "kol"

export const isKol = (w: Pick<TrackedWallet, "kind" | "kolId">): boolean => w.kind === "kol" || w.kolId !== null

/** Whether `w` is labelled `kind` (either kind when undefined). */
export const labelledAs = (w: Pick<TrackedWallet, "kind" | "kolId">, kind: LabelKind | undefined): boolean =>
  kind === undefined ? w.kind === "smartmoney" || isKol(w) : kind === "kol" ? isKol(w) : w.kind === "smartmoney" && !isKol(w)
