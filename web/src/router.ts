/** Client-side routes over the History API; the engine answers the same paths with the shell. */
import { useEffect, useState } from "preact/hooks"

export type Route =
  | { readonly page: "markets" }
  | { readonly page: "token"; readonly chain: "solana" | "hood"; readonly mint: string }
  | { readonly page: "signals" }
  | { readonly page: "lab" }
  | { readonly page: "missing"; readonly path: string }

export const parseRoute = (pathname: string): Route => {
  if (pathname === "/" || pathname === "/markets") return { page: "markets" }
  if (pathname === "/signals") return { page: "signals" }
  if (pathname === "/lab") return { page: "lab" }
  const m = /^\/token\/(solana|hood)\/([^/]+)$/.exec(pathname)
  if (m !== null) return { page: "token", chain: m[1] as "solana" | "hood", mint: decodeURIComponent(m[2]!) }
  return { page: "missing", path: pathname }
}

export const navigate = (href: string): void => {
  history.pushState(null, "", href)
  dispatchEvent(new PopStateEvent("popstate"))
}

/** A same-origin link click handled without a reload (modified clicks keep the browser's meaning). */
export const onLink = (e: MouseEvent): void => {
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? undefined
  if (a === undefined || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
  e.preventDefault()
  navigate(a.getAttribute("href") ?? "/")
}

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.pathname))
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.pathname))
    addEventListener("popstate", on)
    return () => removeEventListener("popstate", on)
  }, [])
  return route
}
