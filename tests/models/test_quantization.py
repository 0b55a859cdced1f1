"""tfm.models.quantization: which CPUs compute bfloat16 in hardware, and the warning a bfloat16 copy gives where
they do not (there it decodes slower than float32)."""

import logging

from tfm.models import quantization


def _cpuinfo(tmp_path, line):
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: test\n{line}\n\nprocessor\t: 1\n{line}\n")
    return str(path)


def test_native_bfloat16_read_from_the_cpu_flags(tmp_path):
    avx2 = "flags\t\t: fpu sse sse2 avx avx2 fma"
    assert quantization.cpu_has_native_bfloat16(_cpuinfo(tmp_path, avx2)) is False
    assert quantization.cpu_has_native_bfloat16(_cpuinfo(tmp_path, avx2 + " avx512f avx512_bf16")) is True
    assert quantization.cpu_has_native_bfloat16(_cpuinfo(tmp_path, avx2 + " amx_tile amx_bf16")) is True
    assert quantization.cpu_has_native_bfloat16(_cpuinfo(tmp_path, "Features\t: fp asimd bf16 i8mm")) is True
    assert quantization.cpu_has_native_bfloat16(str(tmp_path / "absent")) is None


def test_a_bfloat16_copy_warns_only_where_bfloat16_is_emulated(tiny_transformer, monkeypatch, caplog):
    """Emulated (flags read, no bfloat16 flag): the copy is made, with a warning naming why it is slow. Native, or
    flags unreadable, or an int8 copy: no warning."""
    for native, mode, warns in ((False, "bfloat16", True), (True, "bfloat16", False), (None, "bfloat16", False),
                                (False, "int8", False)):
        monkeypatch.setattr(quantization, "cpu_has_native_bfloat16", lambda native=native: native)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tfm.models"):
            copy = quantization.quantized_copy(tiny_transformer, mode)
        assert copy.dtype_policy.name == ("bfloat16" if mode == "bfloat16" else "float32"), (native, mode)
        assert ("no hardware bfloat16" in caplog.text) is warns, (native, mode, caplog.text)
        assert ("decodes slower than the float32 model" in caplog.text) is warns
