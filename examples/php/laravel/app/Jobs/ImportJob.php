<?php

declare(strict_types=1);

namespace App\Jobs;

use Goblin\Laravel\Queue\RateLimitedWithGoblin;
use Illuminate\Bus\Queueable;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Redis;

/**
 * An import, at most once a minute per account (the `imports` limiter, RateLimitedWithGoblin),
 * at most two running at once across the application (Redis::funnel), each account's under
 * its cache lock (waiting in line for it).
 */
class ImportJob implements ShouldQueue
{
    use Dispatchable;
    use InteractsWithQueue;
    use Queueable;

    public function __construct(public string $account)
    {
    }

    public function middleware(): array
    {
        return [new RateLimitedWithGoblin('imports')];
    }

    public function handle(): void
    {
        Redis::funnel('imports')->limit(2)->releaseAfter(60)->block(5)->then(function (): void {
            Cache::lock("import:{$this->account}", 30)->block(5, function (): void {
                Redis::incr("imports:ran:{$this->account}");
            });
        });
    }
}
