<?php

declare(strict_types=1);

namespace App;

use Illuminate\Cache\RateLimiting\Limit;
use Illuminate\Support\Facades\RateLimiter;
use Illuminate\Support\Facades\Route;
use Illuminate\Support\ServiceProvider;

/** The application's own provider: its routes, and its named limiter for imports. */
class Providers extends ServiceProvider
{
    public function boot(): void
    {
        RateLimiter::for('imports', fn ($job) => Limit::perMinute(1)->by($job->account));
        Route::middleware([])->group(base_path('routes/web.php'));
    }
}
