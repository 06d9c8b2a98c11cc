// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice ETH/USD on the Hood localnet, read the way Chainlink's AggregatorV3Interface is read
/// (`latestRoundData`, `decimals`) and moved the way an off-chain reporter moves one (`AnswerUpdated`).
/// The publisher (the localnet's reporter account, which nothing else sends from) posts answers;
/// each post opens a new round stamped with the block time. Any answer is stored: judging it (sign,
/// age) is the reader's job.
contract EthUsdFeed {
    error NotPublisher();

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    address public immutable publisher;
    uint8 public constant decimals = 8;
    string public constant description = "ETH / USD";
    uint256 public constant version = 1;

    uint80 private round;
    int256 private answer;
    uint256 private updated;

    constructor(int256 initialAnswer, address publisher_) {
        publisher = publisher_;
        _post(initialAnswer);
    }

    function updateAnswer(int256 newAnswer) external {
        if (msg.sender != publisher) revert NotPublisher();
        _post(newAnswer);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 current, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return (round, answer, updated, updated, round);
    }

    function _post(int256 newAnswer) private {
        round += 1;
        answer = newAnswer;
        updated = block.timestamp;
        emit AnswerUpdated(newAnswer, round, block.timestamp);
    }
}
