/** Test environment: chDB in `dataDir` and a fresh file-backed embedded bus in a temp directory removed with the scope. */
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"

export const chdbAndTempBus = (dataDir: string, busPrefix: string) =>
  Layer.merge(
    ClickHouse.layerChdb({ dataDir }),
    Layer.unwrapScoped(
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), busPrefix))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        ),
        (dir) => EmbeddedBus.layer({ dir, partitions: 4, fsync: false })
      )
    )
  )
