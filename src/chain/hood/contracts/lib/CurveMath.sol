// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice The bonding curve's integer arithmetic, a line-for-line mirror of src/domain/CurveMath.ts
/// with crossingModel "capped-refund" (Hood). Every division rounds toward the curve:
/// - buy fee = ceil(amountIn·fee/10000); net = amountIn − fee; out = floor(vTok·net/(vQuote+net));
/// - a buy whose net exceeds the remainder r = G − realQuote fills exactly r: gross consumed
///   g = ceil(r·10000/(10000−fee)), fee = g − r, refund = amountIn − g;
/// - sell gross = floor(vQuote·t/(vTok+t)); fee = ceil(gross·fee/10000); out = gross − fee.
/// A fill of 0 tokens or 0 quote is not refused (minAmountOut is the trader's guard).
/// The refusals of the TypeScript (`zero_amount`, `exceeds_curve_supply`, `curve_complete`) are the
/// caller's checks (BondingCurve reverts ZeroAmount, ExceedsCurveSupply, CurveComplete before calling),
/// so every error a curve can revert with is declared once, in BondingCurve's ABI.
/// The property test test/integration/hood.contracts.test.ts pins it equal to the TypeScript to the wei.
library CurveMath {
    uint256 internal constant BPS = 10_000;

    struct Buy {
        uint256 amountOut;
        uint256 fee;
        uint256 net;
        uint256 quoteConsumed;
        uint256 refund;
    }

    struct Sell {
        uint256 amountOut;
        uint256 fee;
        uint256 grossOut;
    }

    function ceilDiv(uint256 a, uint256 b) internal pure returns (uint256) {
        return a == 0 ? 0 : (a - 1) / b + 1;
    }

    /// @param remaining G − realQuote, > 0 while the curve trades. Requires amountIn − fee > 0.
    function quoteBuy(uint256 vQuote, uint256 vTok, uint256 remaining, uint256 feeBps, uint256 amountIn)
        internal
        pure
        returns (Buy memory b)
    {
        uint256 fee = ceilDiv(amountIn * feeBps, BPS);
        uint256 net = amountIn - fee;
        if (net > remaining) {
            uint256 gross = ceilDiv(remaining * BPS, BPS - feeBps);
            b.net = remaining;
            b.fee = gross - remaining;
            b.quoteConsumed = gross;
            b.refund = amountIn - gross;
        } else {
            b.net = net;
            b.fee = fee;
            b.quoteConsumed = amountIn;
        }
        b.amountOut = (vTok * b.net) / (vQuote + b.net);
    }

    /// @dev Requires 0 < tokensIn ≤ tokens sold and not bought back (X − vTok).
    function quoteSell(uint256 vQuote, uint256 vTok, uint256 feeBps, uint256 tokensIn)
        internal
        pure
        returns (Sell memory s)
    {
        s.grossOut = (vQuote * tokensIn) / (vTok + tokensIn);
        s.fee = ceilDiv(s.grossOut * feeBps, BPS);
        s.amountOut = s.grossOut - s.fee;
    }
}
