"""bfloat16 autocast: the model trains and decodes without NaN (CPU here, CUDA where present)."""

import pytest
import torch
import torch.nn.functional as F

import transformer_edu as te

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_bf16_autocast_trains_and_decodes(device, norm_first):
    torch.manual_seed(0)
    config = te.TransformerConfig(30, 30, d_model=32, n_heads=4, d_ff=64, n_layers=2, norm_first=norm_first)
    model = te.Transformer(config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    src = torch.randint(3, 30, (4, 8), device=device)
    src[:2, 6:] = 0  # padding, so masked rows take the safe path in bf16
    tgt = torch.cat([torch.ones(4, 1, dtype=torch.long, device=device), src], dim=1)
    losses = []
    for _ in range(15):
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            logits = model(src, tgt[:, :-1])
            loss = F.cross_entropy(logits.float().reshape(-1, 30), tgt[:, 1:].reshape(-1), ignore_index=0)
        assert logits.dtype == torch.bfloat16
        optimizer.zero_grad()
        loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
        optimizer.step()
        losses.append(loss.item())
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < 0.8 * losses[0]

    model.eval()
    with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.bfloat16):
        memory = model.encode(src)
        cache = model.new_cache()
        step = tgt[:, :1]
        for _ in range(5):
            logits = model.decode(step[:, -1:], memory, te.padding_mask(src), cache=cache)
            assert torch.isfinite(logits).all()
            step = torch.cat([step, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
