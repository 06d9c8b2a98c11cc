// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice 512-bit mulDiv (Remco Bloemen's algorithm, as in Uniswap v3's FullMath, written for 0.8
/// with explicit unchecked blocks) and an integer square root.
library FullMath {
    /// @dev floor(a·b / denominator) with full precision; reverts when denominator is 0 or the
    /// result does not fit 256 bits.
    function mulDiv(uint256 a, uint256 b, uint256 denominator) internal pure returns (uint256 result) {
        unchecked {
            uint256 prod0;
            uint256 prod1;
            assembly {
                let mm := mulmod(a, b, not(0))
                prod0 := mul(a, b)
                prod1 := sub(sub(mm, prod0), lt(mm, prod0))
            }
            if (prod1 == 0) {
                require(denominator > 0);
                assembly {
                    result := div(prod0, denominator)
                }
                return result;
            }
            require(denominator > prod1);
            uint256 remainder;
            assembly {
                remainder := mulmod(a, b, denominator)
                prod1 := sub(prod1, gt(remainder, prod0))
                prod0 := sub(prod0, remainder)
            }
            uint256 twos = denominator & (0 - denominator);
            assembly {
                denominator := div(denominator, twos)
                prod0 := div(prod0, twos)
                twos := add(div(sub(0, twos), twos), 1)
            }
            prod0 |= prod1 * twos;
            uint256 inv = (3 * denominator) ^ 2;
            inv *= 2 - denominator * inv;
            inv *= 2 - denominator * inv;
            inv *= 2 - denominator * inv;
            inv *= 2 - denominator * inv;
            inv *= 2 - denominator * inv;
            inv *= 2 - denominator * inv;
            result = prod0 * inv;
        }
    }

    /// @dev floor(sqrt(x)) by Newton's method from above (Uniswap v2's Math.sqrt).
    function sqrt(uint256 x) internal pure returns (uint256 y) {
        if (x > 3) {
            y = x;
            uint256 z = x / 2 + 1;
            while (z < y) {
                y = z;
                z = (x / z + z) / 2;
            }
        } else if (x != 0) {
            y = 1;
        }
    }
}
