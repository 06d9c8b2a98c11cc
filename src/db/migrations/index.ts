/**
 * Every PostgreSQL migration, keyed `<id>_<name>` as `@effect/sql`'s `Migrator.fromRecord`
 * expects. Ids only grow; a migration that has shipped is never edited (add a new one).
 * Imported statically (not globbed from disk) so the set is fixed at build time and the
 * same on every machine.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Effect } from "effect"
import init from "./0001_init.js"
import ingestCursors from "./0002_ingest_cursors.js"
import accounts from "./0003_accounts.js"
import webhooks from "./0004_webhooks.js"
import wallets from "./0005_wallets.js"
import hoodIngestBlocks from "./0006_hood_ingest_blocks.js"
import marketDataPersonal from "./0007_market_data_personal.js"
import strategies from "./0008_strategies.js"
import agentProfiles from "./0009_agent_profiles.js"
import hoodPools from "./0010_hood_pools.js"
import hostedImages from "./0011_hosted_images.js"
import launchLedger from "./0012_launch_ledger.js"
import headlessLaunches from "./0013_headless_launches.js"
import selfLaunches from "./0014_self_launches.js"
import staking from "./0015_staking.js"
import writeWindows from "./0016_write_windows.js"
import partitionOwners from "./0017_partition_owners.js"
import atomicBundles from "./0018_atomic_bundles.js"
import hoodRewards from "./0019_hood_rewards.js"
import rowLeases from "./0020_row_leases.js"
import agentTrades from "./0021_agent_trades.js"
import spendReservations from "./0023_spend_reservations.js"
import limitOrders from "./0025_limit_orders.js"
import transfers from "./0027_transfers.js"
import withdrawalAddresses from "./0028_withdrawal_addresses.js"
import rateWindowCounts from "./0029_rate_window_counts.js"
import watchlistVersion from "./0030_watchlist_version.js"
import tradeSpend from "./0031_trade_spend.js"
import limitOrderExecutions from "./0033_limit_order_executions.js"
import hostedMetadata from "./0038_hosted_metadata.js"
import tradeSignedPayers from "./0039_trade_signed_payers.js"
import tradeBuiltSlot from "./0040_trade_built_slot.js"
import transferTeePayer from "./0041_transfer_tee_payer.js"
import transferSignedBytes from "./0043_transfer_signed_bytes.js"
import tradeSignedBytes from "./0044_trade_signed_bytes.js"
import tradeApprovals from "./0045_trade_approvals.js"
import limitOrdersOpenId from "./0047_limit_orders_open_id.js"
import limitOrdersPartition from "./0048_limit_orders_partition.js"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_init": init,
  "0002_ingest_cursors": ingestCursors,
  "0003_accounts": accounts,
  "0004_webhooks": webhooks,
  "0005_wallets": wallets,
  "0006_hood_ingest_blocks": hoodIngestBlocks,
  "0007_market_data_personal": marketDataPersonal,
  "0008_strategies": strategies,
  "0009_agent_profiles": agentProfiles,
  "0010_hood_pools": hoodPools,
  "0011_hosted_images": hostedImages,
  "0012_launch_ledger": launchLedger,
  "0013_headless_launches": headlessLaunches,
  "0014_self_launches": selfLaunches,
  "0015_staking": staking,
  "0016_write_windows": writeWindows,
  "0017_partition_owners": partitionOwners,
  "0018_atomic_bundles": atomicBundles,
  "0019_hood_rewards": hoodRewards,
  "0020_row_leases": rowLeases,
  "0021_agent_trades": agentTrades,
  "0023_spend_reservations": spendReservations,
  "0025_limit_orders": limitOrders,
  "0027_transfers": transfers,
  "0028_withdrawal_addresses": withdrawalAddresses,
  "0029_rate_window_counts": rateWindowCounts,
  "0030_watchlist_version": watchlistVersion,
  "0031_trade_spend": tradeSpend,
  "0033_limit_order_executions": limitOrderExecutions,
  "0038_hosted_metadata": hostedMetadata,
  "0039_trade_signed_payers": tradeSignedPayers,
  "0040_trade_built_slot": tradeBuiltSlot,
  "0041_transfer_tee_payer": transferTeePayer,
  "0043_transfer_signed_bytes": transferSignedBytes,
  "0044_trade_signed_bytes": tradeSignedBytes,
  "0045_trade_approvals": tradeApprovals,
  "0047_limit_orders_open_id": limitOrdersOpenId,
  "0048_limit_orders_partition": limitOrdersPartition
}
