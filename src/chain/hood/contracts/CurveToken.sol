// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "./lib/ERC20.sol";

/// @notice The launched token: 18 decimals, the whole fixed supply minted once to its bonding curve
/// at construction; no mint function exists afterwards. Any holder may burn its own tokens (the
/// curve burns what is surrendered in recovery and what migration does not need).
contract CurveToken is ERC20 {
    /// @notice Metadata URI (name, symbol, image, socials as JSON), fixed at launch.
    string public uri;

    constructor(string memory name_, string memory symbol_, string memory uri_, uint256 supply, address holder)
        ERC20(name_, symbol_)
    {
        uri = uri_;
        _mint(holder, supply);
    }

    function decimals() public pure override returns (uint8) {
        return 18;
    }

    function burn(uint256 value) external {
        _burn(msg.sender, value);
    }
}
