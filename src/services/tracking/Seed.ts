/**
 * The embedded mode's tracking seed: the simulation's traders (the Solana localnet dev keys
 * `dev/0..9`, DevKeys.ts, which src/sim/MarketSimulation.ts trades and launches with) labelled as
 * tracked wallets in groups of each visibility, a Hood desk on the Hardhat node's well-known
 * accounts #1..#3, and KOL labels whose handles the simulated social source posts under. Because
 * the simulated traders are tracked, confluence, intra_book and wallet dormancy fire in the
 * embedded mode, and every `/v1/wallets` and `/v1/groups` read returns data on every plan.
 */
import { DEV_ADDRESSES } from "../../chain/solana/localnet/DevKeys.js"
import type { KolLabel, TrackedWallet, TrackingData, Visibility, WalletGroup, WalletKind } from "./Tracking.js"

/** Hardhat's default accounts #1..#3 (public test keys; #0 deploys the localnet contracts). */
export const HOOD_SEED_ADDRESSES = [
  "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
] as const

const GROUPS: ReadonlyArray<Omit<WalletGroup, "walletIds"> & { readonly members: ReadonlyArray<string> }> = [
  { id: "grp_early_birds", name: "Early birds", description: "Wallets that buy in the first minutes of a launch", visibility: "public", members: ["sol_dev0", "sol_dev1", "sol_dev2", "sol_dev3"] },
  { id: "grp_whales", name: "Whales", description: "Large, patient buyers", visibility: "pro", members: ["sol_dev4", "sol_dev5", "sol_dev6"] },
  { id: "grp_insiders", name: "Insider book", description: "Wallets that trade as one book", visibility: "max", members: ["sol_dev2", "sol_dev7", "sol_dev8", "sol_dev9"] },
  { id: "grp_hood_desk", name: "Hood desk", description: "Active Hood traders", visibility: "public", members: ["hood_1", "hood_2", "hood_3"] }
]

const KOLS: ReadonlyArray<KolLabel> = [
  { id: "kol_moonvoice", handle: "moonvoice", name: "Moon Voice", weight: 30, followers: 412_000, walletIds: ["sol_dev1"] },
  { id: "kol_degenanna", handle: "degenanna", name: "Degen Anna", weight: 20, followers: 128_000, walletIds: ["sol_dev5"] },
  { id: "kol_chartbob", handle: "chartbob", name: "Chart Bob", weight: 10, followers: 31_000, walletIds: [] }
]

/** Authors the simulated source also posts under that are not KOLs (their mentions never fire). */
export const SEED_PLAIN_AUTHORS: ReadonlyArray<string> = ["randomreply", "lurker42", "newsbot"]

const LABELS = ["Early Eagle", "Sniper Sam", "Fast Finger", "Dip Buyer", "Whale One", "Whale Two", "Deep Pockets", "Insider A", "Insider B", "Insider C"]
const KINDS: ReadonlyArray<WalletKind> = ["smartmoney", "kol", "smartmoney", "smartmoney", "fund", "kol", "fund", "smartmoney", "smartmoney", "deployer"]
const visibilityOf = (i: number): Visibility => (i < 4 ? "public" : i < 7 ? "pro" : "max")

export const seedTrackingData = (): TrackingData => {
  const groupsOf = (id: string) => GROUPS.filter((g) => g.members.includes(id)).map((g) => g.id).sort()
  const kolOf = (id: string) => KOLS.find((k) => k.walletIds.includes(id))?.id ?? null
  const wallets: Array<TrackedWallet> = DEV_ADDRESSES.map((address, i) => {
    const id = `sol_dev${i}`
    return { id, chain: "solana", address, label: LABELS[i] ?? `Dev ${i}`, kind: KINDS[i] ?? "smartmoney", visibility: visibilityOf(i), groups: groupsOf(id), kolId: kolOf(id) }
  })
  HOOD_SEED_ADDRESSES.forEach((address, i) => {
    const id = `hood_${i + 1}`
    wallets.push({ id, chain: "hood", address, label: `Hood Trader ${i + 1}`, kind: "smartmoney", visibility: "public", groups: groupsOf(id), kolId: null })
  })
  const groups: Array<WalletGroup> = GROUPS.map(({ members, ...g }) => ({ ...g, walletIds: [...members].sort() }))
  return { wallets, groups, kols: KOLS }
}
