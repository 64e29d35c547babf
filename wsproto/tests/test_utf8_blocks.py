"""utf8_valid() takes 32 bytes and more 16 at a time with SSSE3 where the CPU has it
(utf8_core.c); its verdict must be the one-character-at-a-time validator's, which the
fuzz target checks against RFC 3629's table. This checks the two against each other
exhaustively where a block's edges fall: every sequence of 1 to 4 bytes from the bytes
where UTF-8's rules change, at offsets on both sides of a block boundary."""
import platform
import re
import subprocess
from pathlib import Path

from testkit.url_table import build_driver

HERE = Path(__file__).resolve().parent


def test_the_block_validator_agrees_with_the_character_validator(tmp_path: Path) -> None:
    driver = build_driver(tmp_path / "utf8_blocks", [HERE / "c" / "utf8_blocks.c"])
    done = subprocess.run([str(driver)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    checked, mismatches, simd = map(int, re.fullmatch(r"checked (\d+), mismatches (\d+), simd (\d)\n",
                                                      done.stdout).groups())
    assert mismatches == 0 and checked > 21_000_000
    if platform.machine() == "x86_64":
        assert simd == 1, "the SIMD path did not run: the test compared the scalar validator with itself"
