"""Search spaces and exact ablation grids, with random seeds as a repeated axis."""
