/**
 * The page's two servers: the main API (same origin) and the market-data service (its own port,
 * named by the engine in the shell's `curvestream-data-port` meta). The data service wants
 * `Authorization: Bearer <agent key>`: the user pastes the key once (the engine prints it at start
 * and writes it to `<data dir>/local-credentials.json`); it stays in this origin's localStorage.
 */

const KEY_STORAGE = "curvestream.dataKey"

export const dataKey = (): string => localStorage.getItem(KEY_STORAGE) ?? ""

export const setDataKey = (key: string): void => {
  if (key === "") localStorage.removeItem(KEY_STORAGE)
  else localStorage.setItem(KEY_STORAGE, key)
}

const dataPort = (): string => document.querySelector<HTMLMetaElement>('meta[name="curvestream-data-port"]')?.content ?? ""

/** `http://<this host>:<data port>` (or the page's own origin when no port was written in). */
export const dataOrigin = (): string => {
  const port = dataPort()
  return port === "" ? location.origin : `${location.protocol}//${location.hostname}:${port}`
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown
  ) {
    super(`HTTP ${status}: ${typeof body === "object" && body !== null ? JSON.stringify(body).slice(0, 200) : String(body)}`)
  }
}

const readJson = async <T>(res: Response): Promise<T> => {
  const text = await res.text()
  const body: unknown = text === "" ? undefined : JSON.parse(text)
  if (!res.ok) throw new HttpError(res.status, body)
  return body as T
}

/** A read of the main API (same origin). */
export const api = <T>(path: string, signal?: AbortSignal): Promise<T> =>
  fetch(path, signal === undefined ? {} : { signal }).then((r) => readJson<T>(r))

/** A call to the market-data service with the pasted key. */
export const data = <T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> => {
  const headers: Record<string, string> = { authorization: `Bearer ${dataKey()}` }
  if (init.body !== undefined) headers["content-type"] = "application/json"
  return fetch(`${dataOrigin()}${path}`, {
    method: init.method ?? "GET",
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    ...(init.signal !== undefined ? { signal: init.signal } : {})
  }).then((r) => readJson<T>(r))
}

/** The market-data service's WebSocket URL for a path (the key travels as a subprotocol, see `dataSocket`). */
export const dataSocketUrl = (path: string): string => `${dataOrigin().replace(/^http/, "ws")}${path}`
