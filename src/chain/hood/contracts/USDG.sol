// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "./lib/ERC20.sol";

/// @notice USDG, the localnet's dollar test token (6 decimals, as src/domain/QuotePairs.ts says).
/// The owner mints freely; anyone may draw at most FAUCET_MAX_RAW per call from the faucet.
/// It exists only on the localnet, where it is the first contract account #0 deploys.
contract USDG is ERC20 {
    uint256 public constant FAUCET_MAX_RAW = 1_000_000 * 1e6;

    error NotOwner();
    error FaucetLimit(uint256 requested, uint256 max);

    address public immutable owner;

    constructor() ERC20("Global Dollar", "USDG") {
        owner = msg.sender;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        if (msg.sender != owner) revert NotOwner();
        _mint(to, amount);
    }

    function faucet(uint256 amount) external {
        if (amount > FAUCET_MAX_RAW) revert FaucetLimit(amount, FAUCET_MAX_RAW);
        _mint(msg.sender, amount);
    }
}
