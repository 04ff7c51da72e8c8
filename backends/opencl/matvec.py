def variants(): return []
